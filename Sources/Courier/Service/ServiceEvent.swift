import CourierSync
import Foundation
import Synchronization

/// What a service is doing, as GTLR's started/stopped notifications: subscribe with
/// ``ServiceActor/events``.
public enum ServiceEvent: Sendable {
    case started(requestID: String, query: String)
    /// A failed attempt will be sent again after `delay`. libcurl's own re-send of an idempotent
    /// request on a fresh connection (a kept-alive one closed before any response) is told this
    /// way too, with delay zero, when the attempt ends (Docs/Pipeline.md, "libcurl's own re-send").
    case retrying(requestID: String, query: String, attempt: Int, delay: Duration, reason: String)
    /// Fetching all pages moved on to page `page` (2 for the second).
    case nextPage(requestID: String, query: String, page: Int)
    /// The execution ended: `status` is the last HTTP status seen, `error` set on failure.
    case finished(requestID: String, query: String, status: Int?, duration: Duration, error: String?)
    /// A request waited for credentials to be obtained from `source` (a first token, or an
    /// expired one). With background refresh, steady-state requests never do.
    case waitedForCredentials(requestID: String, query: String, source: String)
    /// A refresh of `source`'s credentials ended (`error` set on failure). `background`: it ran
    /// while the old credentials were still good, and nobody waited for it. `requestID` is the
    /// request that started it.
    case credentialsRefreshed(requestID: String, source: String, background: Bool, duration: Duration, error: String?)
    /// The rate of the limit `key` changed (``RateLimits``): down after the server throttled
    /// (`throttled`), or up a step after a window without throttling. `queued` requests wait for tokens.
    case rateLimitChanged(key: String, requestsPerSecond: Double, queued: Int, throttled: Bool)
    /// `host`'s circuit moved to `state` (``CircuitBreakerPolicy``).
    case circuitChanged(host: String, state: CircuitState)

    /// The operation the event is about; empty for service-wide events (rate limits, circuits).
    public var requestID: String {
        switch self {
        case .started(let id, _), .retrying(let id, _, _, _, _), .nextPage(let id, _, _), .finished(let id, _, _, _, _),
             .waitedForCredentials(let id, _, _), .credentialsRefreshed(let id, _, _, _, _): id
        case .rateLimitChanged, .circuitChanged: ""
        }
    }
}

/// Broadcasts events to every subscriber; costs one atomic load when nobody listens.
final class EventHub: Sendable {
    private let subscribers = LockedValue<[UInt64: AsyncStream<ServiceEvent>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)
    /// Subscribers right now, readable without the lock. An event emitted while a subscription
    /// is being made may miss it, as it could miss the lock too.
    private let count = Atomic<Int>(0)

    func subscribe() -> AsyncStream<ServiceEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ServiceEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let id = nextID.add(1, ordering: .relaxed).newValue
        subscribers.withLock { subscribers in
            subscribers[id] = continuation
            count.store(subscribers.count, ordering: .relaxed)
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { subscribers in
                subscribers.removeValue(forKey: id)
                self?.count.store(subscribers.count, ordering: .relaxed)
            }
        }
        return stream
    }

    var hasSubscribers: Bool { count.load(ordering: .relaxed) > 0 }

    func emit(_ event: @autoclosure () -> ServiceEvent) {
        guard count.load(ordering: .relaxed) > 0 else { return }
        let targets = subscribers.withLock { $0.isEmpty ? [] : Array($0.values) }
        guard !targets.isEmpty else { return }
        let event = event()
        for target in targets { target.yield(event) }
    }

    func finishAll() {
        let targets = subscribers.withLock { subscribers -> [AsyncStream<ServiceEvent>.Continuation] in
            defer {
                subscribers.removeAll()
                count.store(0, ordering: .relaxed)
            }
            return Array(subscribers.values)
        }
        for target in targets { target.finish() }
    }
}
