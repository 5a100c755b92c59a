/// The life of one transfer as a pure value: events go in, the actions the shell must take come out.
///
/// No IO happens here, so every transition is unit-tested without sockets. The shell
/// (``Transfer``) owns the curl handle and performs the actions. Returning actions instead of
/// acting also keeps curl re-entrancy out of the state: `curl_easy_pause` may call the write
/// callback synchronously, which is safe only because no mutation of this struct is in progress
/// when the shell performs an action.
struct TransferStateMachine: Sendable {
    /// Where the response body goes.
    enum Delivery: Sendable, Equatable {
        /// Collected in memory up to `limit` bytes (`send`).
        case buffered(limit: Int)
        /// Handed to a consumer; receiving pauses above `highWater` buffered bytes and resumes at `lowWater`.
        case streaming(highWater: Int, lowWater: Int)
        /// Written to a file when the status is 2xx; any other status is buffered up to `errorLimit`.
        case file(errorLimit: Int)
    }

    enum State: Sendable, Equatable {
        /// Created, waiting for admission; holds no curl handle.
        case queued
        /// Attached to the multi handle.
        case running(Running)
        /// Resolved: the caller has its result and the handle is gone.
        case finished
    }

    struct Running: Sendable, Equatable {
        var headDelivered = false
        var bodyToFile = false
        var receivedBytes = 0
        /// Streaming only: bytes handed to the consumer's buffer and not yet taken.
        var bufferedBytes = 0
        var receivePaused = false
        /// Set when the shell must abort the transfer from a callback; wins over curl's own result.
        var abortReason: TransportError?
    }

    let delivery: Delivery
    private(set) var state: State = .queued

    init(delivery: Delivery) {
        self.delivery = delivery
    }

    // MARK: Start

    enum StartAction: Equatable {
        /// Configure a handle and add it to the multi handle.
        case attach
        /// Nothing: the transfer was resolved (cancelled) while it waited.
        case none
    }

    mutating func start() -> StartAction {
        guard case .queued = state else { return .none }
        state = .running(Running())
        return .attach
    }

    // MARK: Body bytes from curl's write callback

    enum ReceiveAction: Equatable {
        /// Buffered: append the bytes.
        case append
        /// Streaming: deliver the head first if `head`, then hand the chunk to the consumer, then pause receiving if `pause`.
        case deliver(head: Bool, pause: Bool)
        /// File delivery: write the bytes to the file (`head` marks the first call).
        case writeToFile
        /// Refuse the bytes; curl fails the transfer and ``finish(_:)`` reports `abortReason`.
        case abort
    }

    /// Called with the status known (the first body byte implies a complete head).
    mutating func receive(byteCount: Int, status: Int) -> ReceiveAction {
        guard case .running(var running) = state else { return .abort }
        if running.abortReason != nil { return .abort }
        defer { state = .running(running) }
        let firstBytes = !running.headDelivered
        running.headDelivered = true
        running.receivedBytes += byteCount

        switch delivery {
        case .buffered(let limit):
            if running.receivedBytes > limit {
                running.abortReason = TransportError(.bodyTooLarge, message: "response body exceeds \(limit) bytes")
                return .abort
            }
            return .append
        case .streaming(let highWater, _):
            running.bufferedBytes += byteCount
            let pause = running.bufferedBytes > highWater && !running.receivePaused
            if pause { running.receivePaused = true }
            return .deliver(head: firstBytes, pause: pause)
        case .file(let errorLimit):
            if firstBytes { running.bodyToFile = (200..<300).contains(status) }
            if running.bodyToFile { return .writeToFile }
            if running.receivedBytes > errorLimit {
                running.abortReason = TransportError(.bodyTooLarge, message: "error body exceeds \(errorLimit) bytes")
                return .abort
            }
            return .append
        }
    }

    /// A callback failed for a local reason (a file write, say): remember why, so ``finish(_:)`` reports it.
    mutating func abort(_ reason: TransportError) {
        guard case .running(var running) = state, running.abortReason == nil else { return }
        running.abortReason = reason
        state = .running(running)
    }

    // MARK: Consumer demand (streaming)

    enum ConsumeAction: Equatable { case none, resumeReceiving }

    mutating func consumed(byteCount: Int) -> ConsumeAction {
        guard case .running(var running) = state, case .streaming(_, let lowWater) = delivery else { return .none }
        running.bufferedBytes -= byteCount
        var action = ConsumeAction.none
        if running.receivePaused && running.bufferedBytes <= lowWater {
            running.receivePaused = false
            action = .resumeReceiving
        }
        state = .running(running)
        return action
    }

    // MARK: Completion

    enum FinishAction: Equatable {
        /// Detach the handle and resolve with the response (`deliverHead`: the head was never handed out).
        case succeed(deliverHead: Bool)
        /// Detach the handle and resolve with `error` (`headDelivered`: a streaming consumer must see it as a body error).
        case fail(TransportError, headDelivered: Bool)
        case none
    }

    /// curl reported the transfer done; `error` is nil when curl succeeded.
    mutating func finish(_ error: TransportError?) -> FinishAction {
        guard case .running(let running) = state else { return .none }
        state = .finished
        if let reason = running.abortReason { return .fail(reason, headDelivered: running.headDelivered) }
        if let error { return .fail(error, headDelivered: running.headDelivered) }
        return .succeed(deliverHead: !running.headDelivered)
    }

    // MARK: Cancellation

    enum CancelAction: Equatable {
        /// Resolve with the error; nothing to detach.
        case failQueued
        /// Remove the handle from the multi handle at once, then resolve with the error.
        case detachAndFail(headDelivered: Bool)
        case none
    }

    mutating func cancel() -> CancelAction {
        switch state {
        case .queued:
            state = .finished
            return .failQueued
        case .running(let running):
            state = .finished
            return .detachAndFail(headDelivered: running.headDelivered)
        case .finished:
            return .none
        }
    }

    var isFinished: Bool { state == .finished }
}
