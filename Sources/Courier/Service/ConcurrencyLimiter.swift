import CourierSync
import DequeModule
import Synchronization

/// At most `limit` holders at once; the others wait in arrival order (FIFO). A waiter whose
/// task is cancelled leaves the queue at once and throws `CancellationError`.
///
/// This is the seeds' "don't hog the backend": ``ServiceActor/Configuration/maxConcurrentQueries``.
final class ConcurrencyLimiter: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: UnsafeContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters = Deque<Waiter>()
        var nextID: UInt64 = 0
    }

    let limit: Int
    private let state: LockedValue<State>

    init(limit: Int) {
        self.limit = max(1, limit)
        state = LockedValue(State(available: max(1, limit)))
    }

    /// Waits for a slot. Pair every successful call with ``release()``.
    func acquire() async throws {
        if state.withLock({ state -> Bool in
            guard state.available > 0, state.waiters.isEmpty else { return false }
            state.available -= 1
            return true
        }) { return }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                let granted = state.withLock { state -> Bool in
                    // Checked under the lock the cancellation handler takes (see RequestRegistry.sleep).
                    if Task.isCancelled { return false }
                    if state.available > 0, state.waiters.isEmpty {
                        state.available -= 1
                        return true
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if granted {
                    continuation.resume()
                } else if Task.isCancelled, !state.withLock({ $0.waiters.contains { $0.id == id } }) {
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Frees a slot: the longest waiter gets it.
    func release() {
        let next = state.withLock { state -> Waiter? in
            if let waiter = state.waiters.popFirst() { return waiter }
            state.available += 1
            return nil
        }
        next?.continuation.resume()
    }

    /// Runs `body` holding a slot.
    nonisolated(nonsending) func withSlot<T>(_ body: nonisolated(nonsending) () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    var waiting: Int { state.withLock { $0.waiters.count } }
}
