import CourierSync

/// The service's circuits, one per host (``ServiceActor/Configuration/Limits-swift.struct/circuitBreaker``).
final class CircuitBreakers: Sendable {
    let policy: CircuitBreakerPolicy
    private let time: ServiceTime
    private let circuits = LockedValue<[String: CircuitStateMachine]>([:])
    private let events: EventHub
    private let metrics: PipelineMetrics

    init(_ policy: CircuitBreakerPolicy, time: ServiceTime, events: EventHub, metrics: PipelineMetrics) {
        self.policy = policy
        self.time = time
        self.events = events
        self.metrics = metrics
    }

    /// Lets a request to `host` through (true: as the half-open probe), or throws ``CircuitOpenError``.
    func admit(_ host: String) throws(CircuitOpenError) -> Bool {
        let now = time.now()
        let (admission, transition) = circuits.withLock { circuits in
            circuits[host, default: CircuitStateMachine(policy: policy)].admit(now: now)
        }
        if let transition { changed(host, transition) }
        switch admission {
        case .allowed: return false
        case .probe: return true
        case .rejected(let retryAfter):
            metrics.circuitRejected(host: host)
            throw CircuitOpenError(host: host, retryAfter: retryAfter)
        }
    }

    /// Reports how a request that ``admit(_:)`` let through went.
    func record(_ host: String, _ outcome: CircuitStateMachine.Outcome, probe: Bool) {
        let now = time.now()
        let transition = circuits.withLock { circuits in
            circuits[host, default: CircuitStateMachine(policy: policy)].record(outcome, probe: probe, now: now)
        }
        if let transition { changed(host, transition) }
    }

    /// Whether an answer counts as the host failing.
    func isFailure(status: Int) -> Bool { policy.failureStatuses.contains(status) }

    func state(of host: String) -> CircuitState {
        circuits.withLock { $0[host]?.current ?? .closed }
    }

    private func changed(_ host: String, _ state: CircuitState) {
        metrics.circuitState(host: host, state)
        events.emit(.circuitChanged(host: host, state: state))
    }
}
