import CCourierSanitizer
import CCurl
import DequeModule
import Foundation

/// One request's trip through libcurl: the thin shell around ``TransferStateMachine``.
///
/// Loop-confined: created by the service on the loop, driven by curl callbacks on the loop,
/// resolved on the loop. While attached, the multi handle holds a +1 retain (taken in
/// `CurlMulti.attach`, dropped in `detach`), so curl's callbacks, which reach it through the easy
/// handle's ``EasyHandle/transfer``, can use an unretained pointer.
///
/// Its mutable state is `@exclusivity(unchecked)`, as is that of ``CurlMulti``, ``EasyHandle``
/// and ``EpollDriver``: one thread touches it (asserted in debug builds by `assertOnLoop`, and
/// checked by ThreadSanitizer in CI), and no access can overlap another, because state changes
/// happen in ``TransferStateMachine``, which returns actions instead of calling out, so curl is
/// never re-entered in the middle of a mutation. The runtime check it saves cost about 3% of the
/// instructions of a small request (Docs/Performance.md).
final class Transfer {
    /// How the caller receives the outcome.
    enum Sink {
        case response(UnsafeContinuation<HTTPResponse, any Error>)
        case stream(ResponseBodyBuffer)
    }

    // The fields are in an order that packs them: the small ones sit together at the end, not
    // each in an 8-byte slot. Every waiting query holds a transfer (Docs/Performance.md, "Decisions").
    // No number of its own: logs name a transfer by its address (``id``), and the 8 bytes went to
    // ``resends`` (the 100,000-in-flight probe's 3 KiB a query has little room).
    let request: HTTPRequest
    /// Not counted (`unowned(unsafe)`): a transfer reads it only on the loop thread, which runs
    /// while its loop, the multi handle's owner, lives. A checked `unowned` reference costs a
    /// retain and a release of its own at each of the dozen reads per request (Docs/Performance.md, "Decisions").
    unowned(unsafe) let multi: CurlMulti
    /// Where curl's silent re-sends are counted, for the operation to tell as retries (see
    /// ``requestWillBeSent()``).
    let resends: TransportResends
    @exclusivity(unchecked) private(set) var sink: Sink?
    /// An outcome that arrived before the caller installed its sink (a cancellation racing the start).
    @exclusivity(unchecked) private var undeliveredError: (any Error)?

    // Attached-only resources, released by `detach()`.
    @exclusivity(unchecked) var easy: EasyHandle?
    @exclusivity(unchecked) var requestBody: RequestBodySource?
    @exclusivity(unchecked) var fileOutput: FileOutput?
    /// Its neighbours in the multi handle's ``TransferList`` while unresolved.
    @exclusivity(unchecked) var listNext: Transfer?
    @exclusivity(unchecked) unowned(unsafe) var listPrevious: Transfer?

    // Response state.
    @exclusivity(unchecked) var body = BufferedBody()
    /// When a byte last moved either way, or the transfer started a connection or sent its
    /// request; the idle timeout counts from here. 0 while curl keeps it waiting for a connection.
    @exclusivity(unchecked) var lastActivity: UInt64 = 0
    /// Body bytes moved so far, only for a request with a progress handler (see ``ProgressCounter``).
    @exclusivity(unchecked) var progressCounter: ProgressCounter?

    @exclusivity(unchecked) var machine: TransferStateMachine
    /// The URL as the transport needs it, read once (see ``RequestTarget``).
    @exclusivity(unchecked) var target: RequestTarget
    /// The last response's header fields so far (see `headerCallback`).
    @exclusivity(unchecked) var receivedHeaders = ReceivedHeaderCollector()
    /// Current `curl_easy_pause` bitmask: both directions are tracked because the call sets both.
    @exclusivity(unchecked) var pauseMask: UInt8 = 0
    /// The status of the response whose body is arriving; 0 before its first byte.
    @exclusivity(unchecked) var status: Int32 = 0

    init(request: HTTPRequest, target: RequestTarget, delivery: TransferStateMachine.Delivery, sink: Sink?,
         multi: CurlMulti, resends: TransportResends) {
        self.request = request
        self.resends = resends
        self.target = target
        self.machine = TransferStateMachine(delivery: delivery)
        self.sink = sink
        self.multi = multi
        LiveObjects.created(.transfer)
    }

    #if DEBUG
    deinit { LiveObjects.destroyed(.transfer) }
    #endif

    /// The transfer in logs: its address, unique while it lives (start, end and cancellation are
    /// logged within its life).
    var id: String { String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16) }

    /// The request's timeouts over the service's. Read when the transfer starts and by the idle
    /// sweep, not stored: 72 bytes in every waiting transfer otherwise.
    var timeouts: Timeouts { request.timeouts.merged(over: multi.settings.timeouts) }

    // MARK: Start

    /// Hands the transfer to the multi handle's admission; nothing if it is already resolved.
    func submit() {
        guard machine.submit() else { return }
        multi.enqueue(self)
    }

    /// Called by the multi handle with an admission slot: takes a handle and hands it to curl,
    /// or resolves with the setup error. Returns false, holding no slot, when the transfer was
    /// resolved while it waited.
    func start() -> Bool {
        guard machine.start() == .attach else { return false }
        do {
            guard let handle = multi.pool.take() else {
                throw TransportError(.unknown, message: "curl_easy_init failed")
            }
            easy = handle
            handle.transfer = Unmanaged.passUnretained(self)
            try configure(handle)
            try multi.attach(self, handle)
            machine.attached()
            multi.trace("transfer started", metadata: Redaction.metadata(["id": "\(id)", "request": "\(request)"]))
        } catch {
            cancel(with: error)
        }
        return true
    }

    // MARK: Completion

    /// curl reported the transfer done.
    func curlDidFinish(_ result: CURLcode) {
        var curlError: TransportError? = result == CURLE_OK ? nil
            : TransportError(curl: result, detail: easy?.errorDetail ?? "", url: request.url.absoluteString)
        // A coded body whose coding had not ended is cut, however complete its framing was.
        if curlError == nil, let decoder = easy?.decoder, !decoder.isComplete { curlError = decoder.incompleteError }
        switch machine.finish(curlError) {
        case .succeed(let deliverHead, let release):
            // Read again for a stream, whose head went out earlier: keeping it would cost every
            // transfer 40 bytes, and a stream only needs its status here.
            let head = readHead()
            if head.isSuccess, let fileOutput, let error = fileOutput.finish() {
                resolve(failing: error, headDelivered: !deliverHead, requestStarted: true, release: release)
                return
            }
            giveBack(release)
            if request.progress != nil { reportProgress() } // the final count
            log(status: head.status)
            publishOutcome()
            switch sink {
            case .response(let continuation):
                let response = HTTPResponse(head: head, body: body.take())
                multi.resumeCaller { continuation.resume(returning: response) }
            case .stream(let buffer):
                if deliverHead { buffer.deliverHead(head) }
                buffer.finish(nil)
            case nil:
                break
            }
            sink = nil
        case .fail(let error, let headDelivered, let requestStarted, let release):
            resolve(failing: error, headDelivered: headDelivered, requestStarted: requestStarted, release: release)
        case .none:
            break
        }
    }

    private func resolve(failing error: any Error, headDelivered: Bool, requestStarted: Bool,
                         release: TransferStateMachine.Release) {
        // A streamed body whose sequence threw ended the transfer: that error is the caller's to see.
        var error = requestBody?.streamBuffer?.producerError ?? error
        // Tracked for non-idempotent requests only: there "never handed to a connection" makes
        // a failure safe to retry whatever the method.
        if !request.isIdempotent, !requestStarted, var transportError = error as? TransportError {
            transportError.requestMayHaveBeenSent = false
            error = transportError
        }
        giveBack(release)
        multi.trace("transfer failed", metadata: Redaction.metadata(["id": "\(id)", "error": "\(error)"]))
        deliver(error, headDelivered: headDelivered)
    }

    /// Installs how the caller receives the outcome; resolves it at once if the transfer already ended.
    func install(_ sink: Sink) {
        assertOnLoop()
        self.sink = sink
        if let error = undeliveredError {
            undeliveredError = nil
            deliver(error, headDelivered: false)
        }
    }

    private func deliver(_ error: any Error, headDelivered: Bool) {
        guard sink != nil else {
            undeliveredError = error
            return
        }
        publishOutcome()
        switch sink {
        case .response(let continuation):
            multi.resumeCaller { continuation.resume(throwing: error) }
        case .stream(let buffer):
            if headDelivered { buffer.finish(error) } else { buffer.failHead(error) }
        case nil:
            break
        }
        sink = nil
    }

    /// Tells ThreadSanitizer that what the loop wrote for the caller happens before the caller's
    /// await returns (``receiveOutcome()``), an order the uninstrumented runtime makes when the
    /// continuation is resumed before the task suspended. Nothing without the sanitizer.
    func publishOutcome() {
        courier_tsan_release(Unmanaged.passUnretained(self).toOpaque())
    }

    /// The caller's side of ``publishOutcome()``, once its await returned.
    func receiveOutcome() {
        courier_tsan_acquire(Unmanaged.passUnretained(self).toOpaque())
    }

    // MARK: Cancellation

    /// Cancels at once: a waiting transfer never gets a handle; a running one leaves the multi handle now.
    func cancel(with error: any Error) {
        assertOnLoop()
        switch machine.cancel() {
        case .fail(let headDelivered, _, let release):
            giveBack(release)
            multi.trace("transfer cancelled", metadata: Redaction.metadata(["id": "\(id)"]))
            deliver(error, headDelivered: headDelivered)
        case .none:
            break
        }
    }

    /// Fails the transfer with one of its timeouts (connect, total or idle), as a curl error
    /// would: a request that never went out is marked so, and may be sent again whatever its method.
    func timeOut(_ error: TransportError) {
        switch machine.cancel() {
        case .fail(let headDelivered, let requestStarted, let release):
            resolve(failing: error, headDelivered: headDelivered, requestStarted: requestStarted, release: release)
        case .none:
            break
        }
    }

    /// Returns what the state machine says the transfer holds; called once, when it resolves.
    private func giveBack(_ release: TransferStateMachine.Release) {
        if let easy {
            self.easy = nil
            if release.detachHandle { multi.detach(self, easy, early: release.removedEarly) }
            easy.transfer = nil
            easy.releaseHeaderList()
            multi.recycle(easy, reset: release.resetHandle)
        }
        multi.resolved(self, release)
        requestBody?.close(reason: TransportError(.cancelled, message: "transfer ended"))
        requestBody = nil
        fileOutput?.close()
    }

    private func log(status: Int) {
        multi.trace("transfer finished", metadata: Redaction.metadata([
            "id": "\(id)", "status": "\(status)",
        ]))
    }

    // MARK: Pausing

    func setPaused(receive: Bool? = nil, send: Bool? = nil) {
        var mask = pauseMask
        if let receive { mask = receive ? mask | UInt8(courier_pause_recv) : mask & ~UInt8(courier_pause_recv) }
        if let send { mask = send ? mask | UInt8(courier_pause_send) : mask & ~UInt8(courier_pause_send) }
        // Only a handle curl still holds: after shutdown a consumer may still drain the buffer,
        // and pausing a detached handle would reach a multi handle that is gone.
        guard mask != pauseMask, machine.isAttached, let easy else { return }
        pauseMask = mask
        // May call the write/read callbacks synchronously: no state mutation is in progress here.
        curl_easy_pause(easy.raw, Int32(mask))
    }

    /// A streamed request body got data (or ended) while curl was waiting for it.
    func bodyDataArrived() {
        if pauseMask & UInt8(courier_pause_send) != 0 { setPaused(send: false) }
    }

    // MARK: Streaming consumer

    /// The consumer wants the next chunk; `continuation` gets it, nil at the end, or the error.
    func nextChunks(for buffer: ResponseBodyBuffer, continuation: UnsafeContinuation<[Data]?, any Error>) {
        assertOnLoop()
        if let chunks = buffer.take(orWait: continuation) {
            continuation.resume(returning: chunks)
            consumed(chunks.reduce(0) { $0 + $1.count })
        }
    }

    func consumed(_ count: Int) {
        if machine.consumed(byteCount: count) == .resumeReceiving { setPaused(receive: false) }
    }
}

extension Transfer {
    /// Traps in debug builds when loop-confined state is touched from another thread: the
    /// compiler cannot see that confinement through `LoopBound`.
    func assertOnLoop(file: StaticString = #file, line: UInt = #line) {
        assert(multi.loop.isCurrent, "a transfer was touched off its event loop", file: file, line: line)
    }
}

/// Monotonic nanoseconds for deadlines and durations.
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
