/// When a host's circuit opens, and how it closes again (``ServiceActor/Configuration/Limits-swift.struct/circuitBreaker``).
///
/// After `failureThreshold` transient failures in a row (refused connections, resets, timeouts,
/// `failureStatuses`), the host's circuit *opens*: its requests fail at once with
/// ``CircuitOpenError`` instead of waiting through timeouts and retries. After `openDuration`
/// one request goes through as a probe (*half-open*): its success closes the circuit, its failure
/// opens it again for twice as long, up to `maximumOpenDuration`.
///
/// Off by default (Docs/CircuitBreaking.md says why): turn it on where failing fast beats waiting,
/// when the caller has something better to do than wait (a fallback, a cached answer, shedding load).
///
/// ```swift
/// configuration.limits.circuitBreaker = CircuitBreakerPolicy(failureThreshold: 5, openDuration: .seconds(10))
/// do {
///     let tasks = try await service.execute(GoogleTasks.Tasklists.list())
/// } catch let error as CircuitOpenError {
///     // the host is down: serve the cached list, try again after error.retryAfter
/// }
/// ```
public struct CircuitBreakerPolicy: Sendable, Hashable {
    /// Transient failures in a row that open a host's circuit.
    public var failureThreshold: Int
    /// How long a circuit stays open before a probe is let through.
    public var openDuration: Duration
    /// The open spell doubles after each failed probe, up to this.
    public var maximumOpenDuration: Duration
    /// Requests let through at once while half-open.
    public var halfOpenProbes: Int
    /// Statuses that count as the host failing; any other answer counts as it working.
    public var failureStatuses: Set<Int>
    /// Whether raw requests (`send`, `stream`, `send(_:writingBodyTo:)`) are guarded too. Off: a raw
    /// request names its own URL and judges its own statuses.
    public var guardsRawRequests: Bool

    public init(failureThreshold: Int = 5, openDuration: Duration = .seconds(10), maximumOpenDuration: Duration = .seconds(120),
                halfOpenProbes: Int = 1, failureStatuses: Set<Int> = [500, 502, 503, 504], guardsRawRequests: Bool = false) {
        self.failureThreshold = max(1, failureThreshold)
        self.openDuration = openDuration
        self.maximumOpenDuration = max(openDuration, maximumOpenDuration)
        self.halfOpenProbes = max(1, halfOpenProbes)
        self.failureStatuses = failureStatuses
        self.guardsRawRequests = guardsRawRequests
    }
}

/// A circuit's state, as ``ServiceEvent/circuitChanged(host:state:)`` tells it.
public enum CircuitState: String, Sendable, Hashable {
    /// Requests go through.
    case closed
    /// Requests fail at once with ``CircuitOpenError``.
    case open
    /// A probe is on its way; its answer closes or reopens the circuit.
    case halfOpen
}

/// A request refused without being sent because its host's circuit is open
/// (``CircuitBreakerPolicy``). Not retried: the circuit is the retry's judgment already made.
public struct CircuitOpenError: CourierError, Hashable {
    /// The host (and port) whose circuit is open.
    public let host: String
    /// When a probe will be let through; nil while one is on its way.
    public let retryAfter: Duration?

    public init(host: String, retryAfter: Duration?) {
        self.host = host
        self.retryAfter = retryAfter
    }

    /// `circuitOpen`: the one kind.
    public var kind: String { "circuitOpen" }

    public var message: String {
        let when = retryAfter.map { "; a probe goes in \($0)" } ?? "; a probe is on its way"
        return "the circuit for \(host) is open after repeated failures\(when)"
    }

    public var description: String { "CircuitOpenError: \(message)" }

    // Equal when the host and the wait are (not only the kind): one host's refusal is not another's.
    public static func == (lhs: CircuitOpenError, rhs: CircuitOpenError) -> Bool {
        lhs.host == rhs.host && lhs.retryAfter == rhs.retryAfter
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(retryAfter)
    }
}
