import CourierSync
import Synchronization

/// Executions in flight by request ID, so `service.cancel(requestID:)` can reach one
/// without holding its task (EvriApi's request identifiers).
final class RequestRegistry: Sendable {
    private struct Entry {
        var cancelled = false
        var transferID: UInt64?
        /// A retry wait in progress, resumed early by a cancellation.
        var waiter: UnsafeContinuation<Void, any Error>?
    }

    private let entries = LockedValue<[String: Entry]>([:])

    func begin(_ id: String) {
        entries.withLock { $0[id] = Entry() }
    }

    func end(_ id: String) {
        entries.withLock { _ = $0.removeValue(forKey: id) }
    }

    func isCancelled(_ id: String) -> Bool {
        entries.withLock { $0[id]?.cancelled ?? false }
    }

    /// Records the transfer now carrying `id`; returns false if the execution was cancelled meanwhile.
    func attach(transfer: UInt64?, to id: String) -> Bool {
        entries.withLock { entries in
            guard entries[id] != nil else { return true }
            entries[id]!.transferID = transfer
            return !entries[id]!.cancelled
        }
    }

    /// Marks `id` cancelled; returns its transfer to cancel, if one is in flight. Unknown or
    /// finished IDs are ignored.
    func cancel(_ id: String) -> UInt64? {
        let (transfer, waiter) = entries.withLock { entries -> (UInt64?, UnsafeContinuation<Void, any Error>?) in
            guard var entry = entries[id], !entry.cancelled else { return (nil, nil) }
            entry.cancelled = true
            let result = (entry.transferID, entry.waiter)
            entry.waiter = nil
            entries[id] = entry
            return result
        }
        waiter?.resume(throwing: CancellationError())
        return transfer
    }

    /// Waits `delay` on `clock`, ending early with `CancellationError` if `id` is cancelled
    /// (or the task is).
    func sleep(_ id: String, for delay: Duration, on clock: any Clock<Duration>) async throws {
        // Nobody can cancel an unregistered ID: a plain (task-cancellable) sleep.
        guard entries.withLock({ $0[id] != nil }) else {
            try await clock.sleep(for: delay)
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await clock.sleep(for: delay) }
            group.addTask {
                try await withTaskCancellationHandler {
                    try await withUnsafeThrowingContinuation { continuation in
                        // Checked under the lock the cancellation handler takes: the task may
                        // have been cancelled (the sleep won) before this ran, and then nobody
                        // else would resume the continuation.
                        let cancelled = self.entries.withLock { entries -> Bool in
                            guard !Task.isCancelled, entries[id] != nil, !entries[id]!.cancelled else { return true }
                            entries[id]!.waiter = continuation
                            return false
                        }
                        if cancelled { continuation.resume(throwing: CancellationError()) }
                    }
                } onCancel: {
                    let waiter = self.entries.withLock { entries -> UnsafeContinuation<Void, any Error>? in
                        defer { entries[id]?.waiter = nil }
                        return entries[id]?.waiter
                    }
                    waiter?.resume(throwing: CancellationError())
                }
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}
