import CCurl
import CCourierExecutor
import Foundation
import Logging

/// libcurl's multi handle and everything attached to it: the handle pool, admission, counters.
///
/// Loop-confined: every method runs on the event loop thread, either from the loop itself
/// (IO readiness, timers) or from ``ServiceActor`` methods, whose executor is the loop. That
/// is why no lock guards any of this state.
final class CurlMulti {
    let handle: UnsafeMutableRawPointer
    let settings: TransportSettings
    @exclusivity(unchecked) var pool: EasyHandlePool
    /// The profile of the last request given all its options, nil unless it was a plain GET: the
    /// handles the pool makes ahead get that profile's options too (``doHandleChores()``). After
    /// any other request they get none: one that does not match would pay a reset.
    @exclusivity(unchecked) var lastProfile: Transfer.ReuseProfile?
    @exclusivity(unchecked) var admission: AdmissionQueue<Transfer, HostKey>
    let driver: any LoopDriver
    unowned(unsafe) var loop: CurlEventLoop!

    /// Every unresolved transfer: for shutdown and the idle sweep.
    @exclusivity(unchecked) private var unresolved = TransferList()
    @exclusivity(unchecked) private var idleWaiters: [UnsafeContinuation<Void, Never>] = []
    var liveTransfers: Int { unresolved.count }
    /// Jobs of callers without an executor preference that resuming their continuations
    /// enqueued to the global pool this turn, held back so the loop can run one in place.
    @exclusivity(unchecked) var resumedCallers: [UnsafeMutableRawPointer] = []
    /// The job of a many-queries consumer (``ResultInbox``) that a worker on the loop resumed
    /// this turn, held back so the loop can run it in place (``CallerResumption``).
    @exclusivity(unchecked) var resumedConsumer: UnsafeMutableRawPointer?
    /// Set while the loop thread runs (resumptions after it retires go to the pool as usual).
    @exclusivity(unchecked) var capturesCallers = false
    /// How many of them the loop ran in place (``TransportStats/callersResumedInPlace``).
    @exclusivity(unchecked) var callersResumedInPlace = 0
    /// Sockets curl opened, by descriptor, with their inode: curl sometimes closes a socket
    /// without its close callback (a connect given up), so counts are checked against the kernel.
    @exclusivity(unchecked) private var sockets: [Int32: UInt64] = [:]
    /// When the next idle-timeout sweep is due, and how often sweeps run while any is needed.
    @exclusivity(unchecked) private(set) var nextSweep: UInt64?
    @exclusivity(unchecked) private var sweepInterval: UInt64 = 1_000_000_000
    /// The idle timeout of the last transfer attached with one, and its sweep interval: a
    /// `Duration`'s conversion is an `Int128` division (about 190 instructions on the loop per
    /// request), and transfers mostly share the service's timeout (see Docs/Performance.md).
    @exclusivity(unchecked) private var lastIdle: (timeout: Duration, sweepInterval: UInt64)?
    /// Attached transfers' total and connect deadlines, kept here rather than by libcurl
    /// (see ``DeadlineSchedule``), and the last timeout of each converted to nanoseconds.
    @exclusivity(unchecked) private var totalDeadlines = DeadlineSchedule<EasyHandle>(kind: .total)
    @exclusivity(unchecked) private var connectDeadlines = DeadlineSchedule<EasyHandle>(kind: .connect)
    @exclusivity(unchecked) private var lastTotal: (timeout: Duration, nanoseconds: UInt64)?
    @exclusivity(unchecked) private var lastConnect: (timeout: Duration, nanoseconds: UInt64)?
    @exclusivity(unchecked) private(set) var completedTransfers = 0
    @exclusivity(unchecked) private var admitting = false
    @exclusivity(unchecked) private var closed = false

    /// Whether the logger takes trace lines, read once when the service starts. Asking swift-log
    /// per line costs a copy of its handler (an existential) and an exclusivity check, about
    /// 220 instructions for a line that goes nowhere, twice a request (Docs/PerformanceDecisions.md).
    let tracesTransfers: Bool

    /// Logs a transfer's trace line when the logger takes them (``tracesTransfers``).
    @inline(__always)
    func trace(_ message: @autoclosure () -> Logger.Message, metadata: @autoclosure () -> Logger.Metadata) {
        if tracesTransfers { settings.logger.trace(message(), metadata: metadata()) }
    }

    /// The service's TLS settings are the defaults, so a plain-http transfer sets no TLS option;
    /// compared once, not per transfer (the comparison cost about 390 instructions a request).
    let tlsIsDefault: Bool

    /// The service's `User-Agent` line, nil when it is empty; formatted once, not per request.
    let userAgentLine: String?
    /// The header lists of a request without headers of its own: the User-Agent line, and with
    /// `decoding` also ``CurlGlobal/acceptEncodingLine`` (see `Transfer.configureHeaders`). Shared
    /// by every such transfer, freed with the multi handle. Made with the handle, not lazily: a
    /// lazy property's every read goes through an exclusivity check.
    @exclusivity(unchecked) private(set) var defaultHeaderLists: (plain: UnsafeMutablePointer<curl_slist>?,
                                                                  decoding: UnsafeMutablePointer<curl_slist>?)

    init(settings: TransportSettings, limits: ConnectionLimits, backend: LoopBackend) throws(TransportError) {
        guard CurlGlobal.initialized, let handle = curl_multi_init() else {
            throw TransportError(.unknown, message: "curl_multi_init failed")
        }
        self.handle = handle
        self.settings = settings
        tracesTransfers = settings.logger.logLevel <= .trace
        tlsIsDefault = settings.tls == TLSConfiguration()
        userAgentLine = settings.userAgent.isEmpty ? nil : "User-Agent: \(settings.userAgent)"
        pool = EasyHandlePool(capacity: limits.maxConcurrentTransfers)
        admission = AdmissionQueue(perKeyLimit: limits.maxConcurrentTransfersPerHost,
                                   totalLimit: limits.maxConcurrentTransfers)
        do {
            switch backend {
            case .epoll: driver = try EpollDriver(multiHandle: handle)
            case .multiPoll: driver = MultiPollDriver(multiHandle: handle)
            }
        } catch {
            curl_multi_cleanup(handle)
            throw error
        }
        // Counted once fully initialized: a throw after this point still runs deinit.
        LiveObjects.created(.multi)
        courier_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, limits.maxConnectionsPerHost)
        courier_multi_setopt_long(handle, CURLMOPT_MAX_TOTAL_CONNECTIONS, limits.maxConnectionsTotal)
        // Keep enough idle connections cached to serve the per-host limit across a few hosts.
        // Saturating: a per-host limit of Int.max ("no limit") overflowed and stopped the process.
        let acrossHosts = limits.maxConnectionsPerHost.multipliedReportingOverflow(by: 4)
        courier_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, max(limits.maxConnectionsTotal, acrossHosts.overflow ? .max : acrossHosts.partialValue))
        courier_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        courier_multi_setopt_long(handle, CURLMOPT_MAX_CONCURRENT_STREAMS, max(1, limits.maxConcurrentStreamsPerConnection))
        defaultHeaderLists = (Self.headerList(userAgentLine), Self.headerList(userAgentLine, CurlGlobal.acceptEncodingLine))
    }

    /// A curl header list of the lines that are not nil (nil when none is).
    private static func headerList(_ lines: String?...) -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines { if let line { list = curl_slist_append(list, line) } }
        return list
    }

    #if DEBUG
    deinit { LiveObjects.destroyed(.multi) }
    #endif

    // MARK: Admission

    /// A transfer built off the loop (``CurlEventLoop/submit(_:sink:cancelled:)``): its sink
    /// installed (delivering a cancellation that got here first), then refused once the multi
    /// handle is closing, resolved at once if its task was cancelled, else enqueued.
    func submit(_ transfer: Transfer, sink: Transfer.Sink, cancelled: Bool) {
        transfer.install(sink)
        if closed {
            transfer.cancel(with: TransportError(.shutdown, message: "the service was shut down"))
        } else if cancelled {
            transfer.cancel(with: CancellationError())
        } else {
            transfer.submit()
        }
    }

    /// A submitted transfer: registered, then started now if a slot is free, else queued.
    func enqueue(_ transfer: Transfer) {
        unresolved.insert(transfer)
        if admission.admit(transfer, key: transfer.target.hostKey) {
            if !transfer.start() { admission.release(key: transfer.target.hostKey) } // resolved meanwhile: the slot is not used
        }
    }

    private func admitWaiting() {
        guard !admitting else { return } // a start() that failed re-enters through resolved(_:_:)
        admitting = true
        defer { admitting = false }
        while let (transfer, key) = admission.nextAdmissible() {
            // Cancelled while it waited (already resolved): the slot goes to the next one.
            if !transfer.start() { admission.release(key: key) }
        }
    }

    /// A transfer resolved: gives back what its state machine says it held. A cancelled waiting
    /// transfer stays in the admission queue, skipped when its turn comes.
    func resolved(_ transfer: Transfer, _ release: TransferStateMachine.Release) {
        if release.leaveRegistry {
            unresolved.remove(transfer)
            if liveTransfers == 0, !idleWaiters.isEmpty {
                let waiters = idleWaiters
                idleWaiters = []
                for waiter in waiters { waiter.resume() }
            }
        }
        if release.returnSlot {
            completedTransfers += 1
            admission.release(key: transfer.target.hostKey)
            if !closed { admitWaiting() }
        }
    }

    /// Resumes `continuation` once no transfer is live (at once if none is).
    func whenIdle(_ continuation: UnsafeContinuation<Void, Never>) {
        if liveTransfers == 0 { continuation.resume() } else { idleWaiters.append(continuation) }
    }

    // MARK: Attaching

    /// Hands `easy` to curl; the multi handle keeps `transfer` alive until ``detach(_:_:)``.
    func attach(_ transfer: Transfer, _ easy: EasyHandle) throws(TransportError) {
        let code = curl_multi_add_handle(handle, easy.raw)
        guard code == CURLM_OK else {
            throw TransportError(.unknown, message: "curl_multi_add_handle: \(String(cString: curl_multi_strerror(code)))")
        }
        _ = Unmanaged.passRetained(transfer) // balanced in detach(_:_:)
        let timeouts = transfer.timeouts
        guard timeouts.idle != nil || timeouts.total != nil else { return }
        let now = MonotonicClock.nanoseconds()
        if let total = timeouts.total {
            totalDeadlines.schedule(easy, interval: Self.nanoseconds(total, last: &lastTotal), now: now)
        }
        if let idle = timeouts.idle {
            // Its idle time starts when it starts a connection or sends its request, not while
            // curl keeps it waiting for a connection another transfer holds.
            transfer.lastActivity = 0
            let interval: UInt64
            if let last = lastIdle, last.timeout == idle {
                interval = last.sweepInterval
            } else {
                // Sweep four times per idle period (50 ms to 1 s) so a timeout fires at most 25% late.
                interval = UInt64(clamping: max(50, min(1000, idle.milliseconds / 4))) * 1_000_000
                lastIdle = (idle, interval)
            }
            sweepInterval = nextSweep == nil ? interval : min(sweepInterval, interval)
            nextSweep = min(nextSweep ?? .max, now + sweepInterval)
        }
    }

    /// `timeout` in nanoseconds (at least a millisecond, as libcurl had it), saturating, through
    /// `last`: a `Duration`'s conversion is an `Int128` division, and transfers mostly share one.
    private static func nanoseconds(_ timeout: Duration, last: inout (timeout: Duration, nanoseconds: UInt64)?) -> UInt64 {
        if let last, last.timeout == timeout { return last.nanoseconds }
        let milliseconds = UInt64(clamping: max(1, timeout.milliseconds))
        let (nanoseconds, overflow) = milliseconds.multipliedReportingOverflow(by: 1_000_000)
        let result = overflow ? .max : nanoseconds
        last = (timeout, result)
        return result
    }

    // MARK: Timeouts

    /// curl is about to make a new connection for `easy`'s transfer (a name lookup, or a socket
    /// for an address it knows): its connect timeout runs from here until the request goes out.
    /// Waiting for a connection another transfer holds does not count, as in libcurl.
    /// Its idle time starts here too.
    func connectionStarting(_ easy: EasyHandle) {
        guard let transfer = easy.transfer?.takeUnretainedValue() else { return }
        let now = MonotonicClock.nanoseconds()
        transfer.lastActivity = now
        guard !easy.deadlineLinks.connect.isScheduled, let connect = transfer.timeouts.connect else { return }
        connectDeadlines.schedule(easy, interval: Self.nanoseconds(connect, last: &lastConnect), now: now)
    }

    /// `easy`'s transfer has a connection and its request goes out: its connect timeout is met.
    func connectionReady(_ easy: EasyHandle) {
        connectDeadlines.remove(easy)
    }

    /// The earliest moment a timeout may fire (a deadline, or the next idle sweep); nil when none can.
    var nextTimeout: UInt64? {
        var earliest = nextSweep
        if let due = totalDeadlines.earliest { earliest = min(earliest ?? .max, due) }
        if let due = connectDeadlines.earliest { earliest = min(earliest ?? .max, due) }
        return earliest
    }

    /// Fails the attached transfers whose total or connect timeout has passed, and sweeps for
    /// idle ones when a sweep is due. Called once per loop turn.
    func expireTimeouts() {
        guard let due = nextTimeout else { return }
        let now = MonotonicClock.nanoseconds()
        guard now >= due else { return }
        // Taken out before failing: failing runs curl, whose callbacks may change the schedules.
        while let easy = totalDeadlines.takeDue(now: now) { timeOut(easy, "not complete within", \.total) }
        while let easy = connectDeadlines.takeDue(now: now) { timeOut(easy, "no connection within", \.connect) }
        sweepIdleTransfers(now: now)
    }

    /// Fails `easy`'s transfer with `timedOut`, its message naming the timeout that passed.
    private func timeOut(_ easy: EasyHandle, _ what: String, _ timeout: KeyPath<Timeouts, Duration?>) {
        guard let transfer = easy.transfer?.takeUnretainedValue() else { return }
        let limit = transfer.timeouts[keyPath: timeout].map { "\($0)" } ?? "its timeout"
        transfer.timeOut(TransportError(.timedOut, message: "\(what) \(limit)", url: transfer.request.url.absoluteString))
    }

    /// Times out attached transfers that moved no byte for their idle timeout.
    private func sweepIdleTransfers(now: UInt64) {
        guard let due = nextSweep, now >= due else { return }
        nextSweep = nil
        var watching = false
        for transfer in unresolved.all where transfer.machine.isAttached {
            guard let idle = transfer.timeouts.idle else { continue }
            guard transfer.lastActivity != 0 else {
                watching = true // waiting for a connection: not idle yet
                continue
            }
            let limit = UInt64(clamping: idle.milliseconds) * 1_000_000
            // Failing one transfer runs curl, whose callbacks may stamp another after `now`.
            if now &- min(now, transfer.lastActivity) >= limit {
                transfer.timeOut(TransportError(.timedOut, message: "no data for \(idle)",
                                                url: transfer.request.url.absoluteString))
            } else {
                watching = true
            }
        }
        if watching { nextSweep = now + sweepInterval }
    }

    /// Takes `easy` back from curl and drops the retain taken in ``attach(_:_:)``; `early`: curl
    /// had not finished the transfer (it timed out or was cancelled).
    func detach(_ transfer: Transfer, _ easy: EasyHandle, early: Bool) {
        curl_multi_remove_handle(handle, easy.raw)
        // Removing a transfer moves on those waiting in curl for a connection slot, due at once;
        // libcurl 8.10.0 to 8.18 then update their timer only if the removed transfer had a timer
        // of its own, and Courier's have none (it keeps its timeouts itself). Unasked, the loop
        // would leave them waiting until some other socket or timer event.
        if early { driver.timerMayBeDue() }
        Unmanaged.passUnretained(transfer).release()
    }

    /// Returns a handle to the pool; `reset` forgets its options first.
    func recycle(_ easy: EasyHandle, reset: Bool) {
        // Checked here: a call for each, on every request, costs more than the check.
        if easy.deadlineLinks.total.isScheduled { totalDeadlines.remove(easy) }
        if easy.deadlineLinks.connect.isScheduled { connectDeadlines.remove(easy) }
        // libcurl (7.88) counts its silent re-sends per handle, gives up after five, and
        // clears the count only in curl_easy_reset: a kept handle would fail the sixth
        // request that ever met a kept-alive connection the server had closed.
        if reset { easy.profile = nil }
        if easy.decoder != nil { easy.decoder = nil }
        pool.recycle(easy)
    }

    /// The pool's chores (``EasyHandlePool/doChores(_:)``), with handles made ahead set up as the
    /// last request was when it was a plain GET. The loop calls it when nothing is queued, before it waits.
    func doHandleChores() {
        let profile = lastProfile
        pool.doChores { if let profile { Transfer.prepare($0, self, as: profile) } }
    }

    // MARK: Driving curl

    /// Resolves every transfer curl reports done. Called by the driver after socket actions.
    func processCompletions() {
        var result = CURLE_OK
        while let easy = courier_multi_next_done(handle, &result) {
            var pointer: UnsafeMutableRawPointer?
            courier_easy_getinfo_ptr(easy, CURLINFO_PRIVATE, &pointer)
            // The handle (see ``EasyHandle/transfer``). Its transfer is taken (retained for the
            // call), not borrowed: finishing detaches it, which drops the references that kept it alive.
            guard let pointer, let transfer = Unmanaged<EasyHandle>.fromOpaque(pointer)._withUnsafeGuaranteedRef({ $0.transfer }) else {
                continue
            }
            transfer.takeUnretainedValue().curlDidFinish(result)
        }
    }

    /// Resumes a caller, keeping back the job it enqueues to the global pool (see ``resumedCallers``).
    @inline(__always)
    func resumeCaller(_ resume: () -> Void) {
        // With another transfer in flight the loop will not run this caller in place
        // (CallerResumption), so it goes to the pool at once instead of being kept back and
        // enqueued at the end of the turn: no work added where the loop is busiest.
        guard capturesCallers, liveTransfers == 0 else { return resume() }
        courier_capture_begin()
        resume()
        if let job = courier_capture_end() { resumedCallers.append(job) }
    }

    /// Resumes a many-queries consumer from the loop thread, keeping back its job (see
    /// ``resumedConsumer``). Unlike a caller's, it is kept back with transfers in flight: the
    /// window's own next request is one of them.
    @inline(__always)
    func resumeConsumer(_ resume: () -> Void) {
        guard capturesCallers, resumedConsumer == nil else { return resume() }
        courier_capture_begin()
        resume()
        resumedConsumer = courier_capture_end()
    }

    /// Counts sockets as curl opens and closes them: the "open connections" statistic.
    func configureSocketCallbacks(_ easy: EasyHandle) {
        let unretained = Unmanaged.passUnretained(self).toOpaque()
        // The handle, not the multi handle: a new connection starts its transfer's connect timeout.
        let handle = Unmanaged.passUnretained(easy).toOpaque()
        courier_easy_setopt_resolver_start_cb(easy.raw) { _, _, userdata in
            Unmanaged<EasyHandle>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { easy in
                easy.transfer?._withUnsafeGuaranteedRef { $0.multi.connectionStarting(easy) }
            }
            return 0
        }
        courier_easy_setopt_ptr(easy.raw, CURLOPT_RESOLVER_START_DATA, handle)
        courier_easy_setopt_opensocket_cb(easy.raw) { userdata, _, address in
            guard let address else { return courier_socket_bad }
            let descriptor = courier_socket_cloexec(address.pointee.family, address.pointee.socktype,
                                                    address.pointee.protocol)
            Unmanaged<EasyHandle>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { easy in
                // curl opens a socket only for a transfer it runs, which holds the handle.
                guard let multi = easy.transfer?._withUnsafeGuaranteedRef({ $0.multi }) else { return }
                if descriptor >= 0 {
                    multi.sockets[descriptor] = inode(of: descriptor)
                    multi.driver.forget(descriptor)
                }
                multi.connectionStarting(easy)
            }
            return descriptor
        }
        courier_easy_setopt_ptr(easy.raw, CURLOPT_OPENSOCKETDATA, handle)
        courier_easy_setopt_closesocket_cb(easy.raw) { userdata, descriptor in
            let multi = Unmanaged<CurlMulti>.fromOpaque(userdata!).takeUnretainedValue()
            multi.sockets[descriptor] = nil
            multi.driver.forget(descriptor)
            return Glibc.close(descriptor)
        }
        courier_easy_setopt_ptr(easy.raw, CURLOPT_CLOSESOCKETDATA, unretained)
    }

    /// Starts the task that pulls a streamed request body into `stream`, one loop hop per chunk.
    func startPump(for body: HTTPRequest.Body, into stream: StreamBuffer) {
        guard case .stream(_, let pump) = body.storage else { return }
        let loop: CurlEventLoop = loop
        let target = LoopBound(stream)
        // The producer runs off the loop, so a slow or CPU-heavy sequence never stalls IO.
        stream.producerTask = Task(executorPreference: globalConcurrentExecutor) {
            do {
                try await pump { chunk in
                    try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                        loop.execute { target.value.offer(chunk, continuation: continuation) }
                    }
                }
                loop.execute { target.value.finish(error: nil) }
            } catch {
                loop.execute { target.value.finish(error: error) }
            }
        }
    }

    // MARK: Shutdown

    /// Resolves every transfer with `error`: the waiting ones first, so none is admitted meanwhile.
    func cancelAll(with error: any Error) {
        closed = true
        for transfer in admission.removeAllWaiting() { transfer.cancel(with: error) }
        for transfer in unresolved.all { transfer.cancel(with: error) }
    }

    /// Destroys the multi handle and every pooled handle. Transfers must be resolved first.
    func close() {
        closed = true
        driver.close()
        curl_multi_cleanup(handle)
        pool.drain()
        // No handle points at them any more.
        if let list = defaultHeaderLists.plain { curl_slist_free_all(list) }
        if let list = defaultHeaderLists.decoding { curl_slist_free_all(list) }
        defaultHeaderLists = (nil, nil)
    }

    /// Sockets curl opened that are still open: the same descriptor with the same inode.
    private func countOpenSockets() -> Int {
        sockets = sockets.filter { inode(of: $0.key) == $0.value }
        return sockets.count
    }

    var stats: TransportStats {
        TransportStats(liveTransfers: liveTransfers, runningTransfers: admission.runningTotal,
                       easyHandles: pool.created, pooledHandles: pool.pooledCount,
                       openConnections: countOpenSockets(), completedTransfers: completedTransfers,
                       callersResumedInPlace: callersResumedInPlace, handleReuses: pool.reuses)
    }
}

/// Process-wide libcurl initialisation, done once and never undone: `curl_global_cleanup` is
/// not thread-safe and other code in the process may still use libcurl at exit.
enum CurlGlobal {
    static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

    /// The `Accept-Encoding` line of automatic decompression: what Courier decodes itself.
    static let acceptEncodingLine: String? = "Accept-Encoding: \(ContentDecoder.offer)"
}

/// A value that may only be touched on its event loop, carried across a `Sendable` boundary
/// (a cancellation handler, a producer task) to be used back on the loop.
struct LoopBound<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The inode of an open descriptor, or 0 when it is closed.
private func inode(of descriptor: Int32) -> UInt64 {
    var info = stat()
    return fstat(descriptor, &info) == 0 ? UInt64(info.st_ino) : 0
}
