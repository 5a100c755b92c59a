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

    enum Phase: Sendable, Equatable {
        /// Created; not yet handed to the multi handle.
        case created
        /// Handed to the multi handle, waiting in the admission queue; holds no slot and no curl handle.
        case waiting
        /// Holds an admission slot and, once ``attached()``, a handle curl drives (see ``Running``).
        case running
        /// Resolved: the caller has its result and every resource went back.
        case finished
    }

    /// What a running transfer has done so far. Kept beside ``Phase`` rather than as its payload,
    /// so each callback updates a field in place instead of copying the struct out and back.
    struct Running: Sendable, Equatable {
        // The flags first, together, then the 8-byte fields: packed, the machine is 64 bytes.
        /// curl holds the handle (`curl_multi_add_handle` succeeded).
        var attached = false
        var headDelivered = false
        var bodyToFile = false
        var receivePaused = false
        /// Whether a response began since the last request curl began to send (see `requestsStarted`).
        var responseSinceRequest = false
        /// curl re-sent on this handle: the handle must be reset before reuse (see ``Release``).
        var curlResent = false
        var receivedBytes = 0
        /// Streaming only: bytes handed to the consumer's buffer and not yet taken.
        var bufferedBytes = 0
        /// Requests curl began to send: with `responseSinceRequest`, they tell a redirect from
        /// curl's silent re-send on a fresh connection (``requestWillBeSent(idempotent:)``).
        var requestsStarted = 0
        /// Set when the shell must abort the transfer from a callback; wins over curl's own result.
        var abortReason: TransportError? {
            get { if case .reason(let reason) = abort { reason } else { nil } }
            set { abort = newValue.map(Abort.reason) }
        }
        /// Boxed: few transfers abort, and inline the error took 58 bytes of every waiting one.
        private var abort: Abort?
    }

    /// An abort's reason, in a box of its own (see ``Running/abortReason``).
    indirect enum Abort: Sendable, Equatable {
        case reason(TransportError)
    }

    /// What a resolving transfer gives back, decided here so the shell never reads flags to find out.
    struct Release: Sendable, Equatable {
        /// It was handed to the multi handle: leave the registry and the live count.
        var leaveRegistry = false
        /// It held an admission slot: return it and admit the next waiting transfer.
        var returnSlot = false
        /// curl holds the handle: `curl_multi_remove_handle` and drop the multi handle's retain.
        var detachHandle = false
        /// The handle met curl's silent re-send: reset it before the pool hands it out again
        /// (libcurl counts re-sends per handle and gives up after five).
        var resetHandle = false
        /// curl had not finished it: removing it may let a transfer waiting for its connection go
        /// on without curl asking for a timer (``LoopDriver/timerMayBeDue()``).
        var removedEarly = false

        static let nothing = Release()
    }

    let delivery: Delivery
    private(set) var phase = Phase.created
    private var running = Running()

    init(delivery: Delivery) {
        self.delivery = delivery
    }

    // MARK: Admission and start

    /// Handed to the multi handle; false when already resolved (cancelled before submission).
    mutating func submit() -> Bool {
        guard phase == .created else { return false }
        phase = .waiting
        return true
    }

    enum StartAction: Equatable {
        /// Configure a handle and add it to the multi handle.
        case attach
        /// Nothing: the transfer was resolved (cancelled) while it waited.
        case none
    }

    /// Admitted: it holds a slot from now on.
    mutating func start() -> StartAction {
        guard phase == .waiting else { return .none }
        phase = .running
        return .attach
    }

    /// curl took the handle.
    mutating func attached() {
        guard phase == .running else { return }
        running.attached = true
    }

    var isAttached: Bool {
        phase == .running && running.attached
    }

    // MARK: Requests curl sends (the prerequest callback) and responses it receives

    /// What the prerequest callback answers curl (``requestWillBeSent(idempotent:url:)``).
    enum RequestStart: Equatable {
        /// The request goes out: the first time, or after a response (a redirect).
        case send
        /// curl's silent re-send on a fresh connection, of an idempotent request: it goes out,
        /// and the shell counts it, so the operation announces it as a retry.
        case resend
        /// The same re-send of a request that is not idempotent: aborted (`connectionLost`).
        case refuse
    }

    /// curl is about to send the request on a connection. A second request without a response
    /// in between is curl's silent re-send on a fresh connection (a redirect follows a
    /// response): the server may have acted on the first, so it is refused unless `idempotent`.
    /// `url` names the request in the error (read only if refused).
    mutating func requestWillBeSent(idempotent: Bool, url: @autoclosure () -> String) -> RequestStart {
        guard phase == .running else { return .refuse }
        let resend = running.requestsStarted > 0 && !running.responseSinceRequest
        running.requestsStarted += 1
        running.responseSinceRequest = false
        guard resend else { return .send }
        running.curlResent = true
        if idempotent { return .resend }
        if running.abortReason == nil {
            running.abortReason = TransportError(
                .connectionLost,
                message: "the kept-alive connection closed before any response; the request may have reached "
                    + "the server and is not idempotent, so it is not re-sent",
                url: url())
        }
        return .refuse
    }

    /// A response head began (a status line arrived).
    mutating func responseBegan() {
        guard phase == .running else { return }
        running.responseSinceRequest = true
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
        guard phase == .running, running.abortReason == nil else { return .abort }
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
        guard phase == .running, running.abortReason == nil else { return }
        running.abortReason = reason
    }

    // MARK: Consumer demand (streaming)

    enum ConsumeAction: Equatable { case none, resumeReceiving }

    mutating func consumed(byteCount: Int) -> ConsumeAction {
        guard phase == .running, case .streaming(_, let lowWater) = delivery else { return .none }
        running.bufferedBytes -= byteCount
        var action = ConsumeAction.none
        if running.receivePaused && running.bufferedBytes <= lowWater {
            running.receivePaused = false
            action = .resumeReceiving
        }
        return action
    }

    // MARK: Completion

    enum FinishAction: Equatable {
        /// Give back `release`, then resolve with the response (`deliverHead`: the head was never handed out).
        case succeed(deliverHead: Bool, release: Release)
        /// Give back `release`, then resolve with `error` (`headDelivered`: a streaming consumer
        /// must see it as a body error; `requestStarted`: curl began to send the request).
        case fail(TransportError, headDelivered: Bool, requestStarted: Bool, release: Release)
        case none
    }

    /// curl reported the transfer done; `error` is nil when curl succeeded.
    mutating func finish(_ error: TransportError?) -> FinishAction {
        guard phase == .running else { return .none }
        phase = .finished
        let release = Self.release(running)
        if let reason = running.abortReason ?? error {
            return .fail(reason, headDelivered: running.headDelivered, requestStarted: running.requestsStarted > 0,
                         release: release)
        }
        return .succeed(deliverHead: !running.headDelivered, release: release)
    }

    private static func release(_ running: Running) -> Release {
        Release(leaveRegistry: true, returnSlot: true, detachHandle: running.attached, resetHandle: running.curlResent)
    }

    // MARK: Cancellation

    enum CancelAction: Equatable {
        /// Give back `release`, then resolve with the error.
        case fail(headDelivered: Bool, requestStarted: Bool, release: Release)
        case none
    }

    /// Cancels at once, whatever the transfer holds: a waiting one never gets a handle, a running
    /// one leaves the multi handle now. Also how a failed setup ends.
    mutating func cancel() -> CancelAction {
        switch phase {
        case .created:
            phase = .finished
            return .fail(headDelivered: false, requestStarted: false, release: .nothing)
        case .waiting:
            phase = .finished
            // The admission queue still holds it; it is skipped when its turn comes.
            return .fail(headDelivered: false, requestStarted: false, release: Release(leaveRegistry: true))
        case .running:
            phase = .finished
            var release = Self.release(running)
            release.removedEarly = running.attached
            return .fail(headDelivered: running.headDelivered, requestStarted: running.requestsStarted > 0,
                         release: release)
        case .finished:
            return .none
        }
    }

    var isFinished: Bool { phase == .finished }
}
