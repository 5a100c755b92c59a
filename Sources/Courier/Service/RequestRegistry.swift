import CourierSync
import Synchronization

/// Operations in flight by request ID, so `service.cancel(requestID:)` can reach one without
/// holding its task (EvriApi's request identifiers).
///
/// Each operation runs in a child task of its caller; cancelling an ID cancels that child task.
/// So cancellation by ID is Task cancellation: it reaches every suspension point the operation
/// may be in (the limiter's queue, a token refresh, a transfer, a retry wait) through the same
/// handlers, and the caller's own task stays uncancelled.
final class RequestRegistry: Sendable {
    /// A running child task. `UnsafeCurrentTask` may not outlive its task: an entry is removed,
    /// under the lock, before the task's body returns, and `cancel()` is only called under that
    /// lock, so the reference is always to a live task.
    private struct Running: @unchecked Sendable {
        let token: UInt64
        let task: UnsafeCurrentTask
    }

    private struct State {
        var running: [String: [Running]] = [:]
        var nextToken: UInt64 = 0
    }

    private let state = LockedValue(State())

    /// Runs `body` in a child task registered under `id` until it returns.
    func run<T: Sendable>(_ id: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask {
                let token = withUnsafeCurrentTask { task in self.register(id, task!) }
                defer { self.unregister(id, token) }
                return try await body()
            }
            return try await group.next()!
        }
    }

    private func register(_ id: String, _ task: UnsafeCurrentTask) -> UInt64 {
        state.withLock { state in
            state.nextToken += 1
            state.running[id, default: []].append(Running(token: state.nextToken, task: task))
            return state.nextToken
        }
    }

    private func unregister(_ id: String, _ token: UInt64) {
        state.withLock { state in
            state.running[id]?.removeAll { $0.token == token }
            if state.running[id]?.isEmpty == true { state.running[id] = nil }
        }
    }

    /// Cancels every operation running under `id`; returns how many. Unknown or finished IDs are ignored.
    @discardableResult
    func cancel(_ id: String) -> Int {
        state.withLock { state in
            let running = state.running[id] ?? []
            for entry in running { entry.task.cancel() }
            return running.count
        }
    }

    /// Whether an operation runs under `id`.
    func isRunning(_ id: String) -> Bool {
        state.withLock { $0.running[id] != nil }
    }
}
