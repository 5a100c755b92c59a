import CourierSync
import Synchronization

/// At most `limit` holders at once; the others wait in arrival order (FIFO). A waiter whose
/// task is cancelled leaves the queue at once and throws `CancellationError`.
///
/// This is the seeds' "don't hog the backend": ``ServiceActor/Configuration/Limits-swift.struct/maxConcurrentQueries``.
final class ConcurrencyLimiter: Sendable {
    private struct State: Sendable {
        var available: Int
        var waiters = WaiterQueue()
    }

    let limit: Int
    private let state: LockedValue<State>

    init(limit: Int) {
        self.limit = max(1, limit)
        state = LockedValue(State(available: max(1, limit)))
    }

    /// Waits for a slot. Pair every successful call with ``release()``.
    func acquire() async throws {
        try await state.wait(in: \.waiters) { state in
            guard state.available > 0, state.waiters.isEmpty else { return false }
            state.available -= 1
            return true
        }
    }

    /// Frees a slot: the longest waiter gets it.
    func release() {
        let next = state.withLock { state -> WaiterQueue.Continuation? in
            if let waiter = state.waiters.popFirst() { return waiter }
            state.available += 1
            return nil
        }
        next?.resume()
    }

    /// Runs `body` holding a slot.
    nonisolated(nonsending) func withSlot<T>(_ body: nonisolated(nonsending) () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    var waiting: Int { state.withLock { $0.waiters.count } }
}
