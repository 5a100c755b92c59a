import CourierSync
import Synchronization

/// What the test server saw: requests, connections and concurrency, for assertions that
/// need the server's side of the story.
public final class TestServerCounters: Sendable {
    private struct State {
        var requests = 0
        var proxiedRequests = 0
        var inFlight = 0
        var maxInFlight = 0
        var connectionsOpened = 0
        var connectionsOpen = 0
        var invocations: [Invocation] = []
        var invocationCount = 0
        var batchParts: [Invocation] = []
    }

    private let state = LockedValue(State())

    public init() {}

    /// Requests received on the main listener.
    public var requests: Int { state.withLock { $0.requests } }
    /// Requests that came as to a proxy (libcurl marks them with `Proxy-Connection`): the server
    /// stands in for one when a client is configured with its address as the proxy.
    public var proxiedRequests: Int { state.withLock { $0.proxiedRequests } }
    /// Requests being handled right now.
    public var inFlight: Int { state.withLock { $0.inFlight } }
    /// The most requests handled at once since the last ``resetMaxInFlight()``.
    public var maxInFlight: Int { state.withLock { $0.maxInFlight } }
    /// Connections accepted, on both listeners.
    public var connectionsOpened: Int { state.withLock { $0.connectionsOpened } }
    /// Connections open right now, on both listeners.
    public var connectionsOpen: Int { state.withLock { $0.connectionsOpen } }

    /// A request's Cloud Storage invocation headers (`x-goog-gcs-idempotency-token`,
    /// `x-goog-api-client`), nil where it had none.
    public struct Invocation: Sendable, Equatable {
        public var token: String?
        public var client: String?
    }

    /// The invocation headers of the requests that carried any, in order: the last
    /// ``keptInvocations`` of them (a load run through the server must not grow it without end).
    public var invocations: [Invocation] { state.withLock { $0.invocations } }
    /// Requests with invocation headers received so far, kept or not.
    public var invocationCount: Int { state.withLock { $0.invocationCount } }
    public static let keptInvocations = 10_000

    /// The invocation headers of each part of the wire batches received, in order (a part with
    /// none has both nil): the parts are requests of their own, inside one HTTP request.
    public var batchParts: [Invocation] { state.withLock { $0.batchParts } }

    public func resetMaxInFlight() { state.withLock { $0.maxInFlight = $0.inFlight } }

    func requestStarted(proxied: Bool, invocation: Invocation) {
        state.withLock {
            $0.requests += 1
            if invocation.token != nil || invocation.client != nil {
                $0.invocationCount += 1
                if $0.invocations.count == Self.keptInvocations { $0.invocations.removeFirst($0.invocations.count / 2) }
                $0.invocations.append(invocation)
            }
            if proxied { $0.proxiedRequests += 1 }
            $0.inFlight += 1
            $0.maxInFlight = max($0.maxInFlight, $0.inFlight)
        }
    }

    func batchPartReceived(_ invocation: Invocation) {
        state.withLock {
            if $0.batchParts.count == Self.keptInvocations { $0.batchParts.removeFirst($0.batchParts.count / 2) }
            $0.batchParts.append(invocation)
        }
    }

    func requestEnded() { state.withLock { $0.inFlight -= 1 } }

    func connectionOpened() {
        state.withLock {
            $0.connectionsOpened += 1
            $0.connectionsOpen += 1
        }
    }

    func connectionClosed() { state.withLock { $0.connectionsOpen -= 1 } }
}
