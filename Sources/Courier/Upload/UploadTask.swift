import CourierSync
import Foundation
import Synchronization

/// An upload in progress: its progress, pause and resume, cancellation, and the final object.
///
/// ```swift
/// let task = service.upload(query)
/// Task { for await progress in task.progress { print(progress.fractionCompleted) } }
/// task.pause()                                  // the chunk in flight finishes first
/// task.resume()                                 // continues at the acknowledged offset
/// let object = try await task.value
/// ```
///
/// `pause()` lets the chunk in flight finish, so the offset is known and resuming needs no status
/// query. Multipart and media uploads are one request each and cannot pause. `cancel()` stops
/// the upload; so does cancelling a task that awaits ``value``.
public final class UploadTask<Response: QueryResponse>: Sendable {
    let control: UploadControl
    private let task: Task<Response, any Error>

    init(control: UploadControl, operation: @escaping @Sendable (UploadControl) async throws -> Response) {
        self.control = control
        task = Task { [control] in
            defer { control.finishProgress() }
            return try await operation(control)
        }
    }

    /// The final object, once the server has every byte.
    public var value: Response {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: { [task, control] in
                control.cancel()
                task.cancel()
            }
        }
    }

    /// Stops sending after the request in flight; ``resume()`` continues. If that request carries
    /// the last chunk, the upload completes instead. With adaptive chunk sizes a chunk may be up
    /// to ``UploadParameters/maximumChunkSize``, which the pause waits for.
    public func pause() {
        control.requestPause()
    }

    /// Continues a paused upload.
    public func resume() {
        control.requestResume()
    }

    /// Stops the upload; ``value`` throws `CancellationError`. The server session is left to expire.
    public func cancel() {
        control.cancel()
        task.cancel()
    }

    /// Progress as it happens (the latest value each time you look). Each access is a new subscription.
    public var progress: AsyncStream<UploadProgress> { control.subscribe() }

    /// The latest progress.
    public var currentProgress: UploadProgress { control.latest }

    /// Whether the upload is paused and waiting for ``resume()``.
    public var isPaused: Bool { control.isPaused }

    /// The resumable session as of the last acknowledged chunk, to continue in another process.
    public var session: UploadSession? { control.session }
}

/// The state an ``UploadTask`` shares with the loop that runs the upload.
final class UploadControl: Sendable {
    private struct State {
        var pauseRequested = false
        var paused = false
        var cancelled = false
        var resumeWaiter: UnsafeContinuation<Void, any Error>?
        var subscribers: [UInt64: AsyncStream<UploadProgress>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var latest: UploadProgress
        var session: UploadSession?
        var finished = false
    }

    private let state: LockedValue<State>

    init(total: Int64?) {
        state = LockedValue(State(latest: UploadProgress(bytesSent: 0, totalBytes: total)))
    }

    var pauseRequested: Bool { state.withLock { $0.pauseRequested } }
    var isPaused: Bool { state.withLock { $0.paused } }
    var latest: UploadProgress { state.withLock { $0.latest } }
    var session: UploadSession? { state.withLock { $0.session } }

    func requestPause() {
        state.withLock { $0.pauseRequested = true }
    }

    func requestResume() {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            state.pauseRequested = false
            defer { state.resumeWaiter = nil }
            return state.resumeWaiter
        }
        waiter?.resume()
    }

    func cancel() {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            state.cancelled = true
            defer { state.resumeWaiter = nil }
            return state.resumeWaiter
        }
        waiter?.resume(throwing: CancellationError())
    }

    /// Waits while a pause is requested; returns at once otherwise.
    func waitWhilePaused() async throws {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                state.withLock { state -> WaitDecision in
                    if state.cancelled || Task.isCancelled { return .cancelled }
                    guard state.pauseRequested else { return .proceed }
                    state.paused = true
                    state.resumeWaiter = continuation
                    return .parked
                }.settle(continuation)
            }
        } onCancel: {
            cancel()
        }
        state.withLock { $0.paused = false }
    }

    func record(_ session: UploadSession?) {
        state.withLock { $0.session = session }
    }

    func publish(_ progress: UploadProgress) {
        let targets = state.withLock { state -> [AsyncStream<UploadProgress>.Continuation] in
            state.latest = progress
            return Array(state.subscribers.values)
        }
        for target in targets { target.yield(progress) }
    }

    func subscribe() -> AsyncStream<UploadProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: UploadProgress.self, bufferingPolicy: .bufferingNewest(1))
        let (latest, finished, id) = state.withLock { state -> (UploadProgress, Bool, UInt64) in
            state.nextSubscriber += 1
            if !state.finished { state.subscribers[state.nextSubscriber] = continuation }
            return (state.latest, state.finished, state.nextSubscriber)
        }
        continuation.yield(latest)
        if finished { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func finishProgress() {
        let targets = state.withLock { state -> [AsyncStream<UploadProgress>.Continuation] in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for target in targets { target.finish() }
    }
}
