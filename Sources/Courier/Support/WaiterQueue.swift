import CourierSync
import DequeModule

/// Tasks suspended in arrival order until something grants them a turn; a waiter whose task is
/// cancelled leaves the queue at once and throws `CancellationError`. The queue lives inside the
/// state it guards (one lock for both), as the concurrency and rate limiters keep it.
struct WaiterQueue: Sendable {
    typealias Continuation = UnsafeContinuation<Void, any Error>

    private struct Waiter: Sendable {
        let id: UInt64
        let continuation: Continuation
    }

    private var waiters = Deque<Waiter>()
    private var nextID: UInt64 = 0

    var count: Int { waiters.count }
    var isEmpty: Bool { waiters.isEmpty }

    /// The longest waiter, to be resumed outside the lock.
    mutating func popFirst() -> Continuation? { waiters.popFirst()?.continuation }

    /// Every waiter, to be resumed (or failed) outside the lock.
    mutating func removeAll() -> [Continuation] {
        defer { waiters.removeAll() }
        return waiters.map(\.continuation)
    }

    fileprivate mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    fileprivate mutating func append(_ id: UInt64, _ continuation: Continuation) {
        waiters.append(Waiter(id: id, continuation: continuation))
    }

    fileprivate mutating func remove(_ id: UInt64) -> Continuation? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }
}

private enum WaitOutcome { case granted, cancelled, queued }

extension LockedValue where Value: Sendable {
    /// Returns at once when `grant` succeeds under the lock; otherwise waits in `queue` until a
    /// holder resumes it (``WaiterQueue/popFirst()``), or throws `CancellationError` as soon as
    /// the task is cancelled. `enqueued` runs under the lock when the task joins the queue.
    func wait(in queue: WritableKeyPath<Value, WaiterQueue> & Sendable, grant: (inout Value) -> Bool,
              enqueued: (inout Value) -> Void = { _ in }) async throws {
        if withLock({ grant(&$0) }) { return }
        let id = withLock { $0[keyPath: queue].makeID() }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: WaiterQueue.Continuation) in
                let outcome = withLock { value -> WaitOutcome in
                    // Checked under the lock the cancellation handler takes: a cancellation either
                    // finds the waiter queued or is seen here. Once queued, the waiter is resumed
                    // by whoever removes it (a holder, or the handler), never here.
                    if Task.isCancelled { return .cancelled }
                    if grant(&value) { return .granted }
                    value[keyPath: queue].append(id, continuation)
                    enqueued(&value)
                    return .queued
                }
                switch outcome {
                case .granted: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .queued: break
                }
            }
        } onCancel: {
            withLock { $0[keyPath: queue].remove(id) }?.resume(throwing: CancellationError())
        }
    }
}
