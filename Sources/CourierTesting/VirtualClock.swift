import Courier
import CourierSync
import Synchronization

/// A clock whose `sleep` returns at once, moving its time forward and recording how long was
/// asked: retry and backoff tests run in microseconds and assert the exact waits.
///
/// ```swift
/// let clock = VirtualClock()
/// configuration.testing.clock = clock
/// … run a query that is retried twice …
/// #expect(clock.sleeps == [.seconds(1), .seconds(2)])
/// ```
public final class VirtualClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = LockedValue<(now: Instant, sleeps: [Duration])>((Instant(offset: .zero), []))

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Every wait asked for, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Total virtual time slept.
    public var elapsed: Duration { now.offset }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            if deadline > state.now {
                state.sleeps.append(deadline.offset - state.now.offset)
                state.now = deadline
            } else {
                state.sleeps.append(.zero)
            }
        }
        await Task.yield()
    }
}
