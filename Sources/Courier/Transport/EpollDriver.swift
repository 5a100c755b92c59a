import CCurl
import Glibc

/// Drives libcurl through its socket interface over epoll, with an eventfd for wake-ups.
///
/// curl tells us which sockets to watch (`CURLMOPT_SOCKETFUNCTION`) and when to call it back
/// (`CURLMOPT_TIMERFUNCTION`); we call `curl_multi_socket_action` only for sockets that are
/// ready. Work per loop turn is proportional to activity, not to the number of transfers.
final class EpollDriver: LoopDriver {
    private let multiHandle: UnsafeMutableRawPointer
    private let epollDescriptor: Int32
    private let eventDescriptor: Int32
    /// Events registered with the kernel per descriptor (0: none), indexed by fd.
    @exclusivity(unchecked) private var registered: [UInt32] = []
    /// Events curl currently wants per descriptor (0: none), indexed by fd.
    @exclusivity(unchecked) private var wanted: [UInt32] = []
    @exclusivity(unchecked) private var timerDeadline: UInt64?
    private let events = UnsafeMutablePointer<courier_event>.allocate(capacity: 256)
    @exclusivity(unchecked) private var runningHandles: Int32 = 0

    let waker: LoopWaker

    init(multiHandle: UnsafeMutableRawPointer) throws(TransportError) {
        self.multiHandle = multiHandle
        epollDescriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        eventDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        waker = LoopWaker(eventDescriptor: eventDescriptor, multiAddress: 0)
        guard epollDescriptor >= 0, eventDescriptor >= 0,
              courier_epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, eventDescriptor, EPOLLIN.rawValue) == 0
        else {
            if epollDescriptor >= 0 { Glibc.close(epollDescriptor) }
            if eventDescriptor >= 0 { Glibc.close(eventDescriptor) }
            events.deallocate()
            throw TransportError(.unknown, message: "epoll/eventfd setup failed: errno \(errno)")
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        courier_multi_setopt_socket_cb(multiHandle) { _, descriptor, what, userp, _ in
            // Borrowed, not retained: the driver outlives its multi handle's callbacks (Docs/Performance.md, "Decisions").
            Unmanaged<EpollDriver>.fromOpaque(userp!)._withUnsafeGuaranteedRef { $0.watch(descriptor, what) }
            return 0
        }
        courier_multi_setopt_ptr(multiHandle, CURLMOPT_SOCKETDATA, me)
        courier_multi_setopt_timer_cb(multiHandle) { _, timeout, userp in
            Unmanaged<EpollDriver>.fromOpaque(userp!)._withUnsafeGuaranteedRef {
                $0.timerDeadline = timeout < 0 ? nil : MonotonicClock.nanoseconds() + UInt64(timeout) * 1_000_000
            }
            return 0
        }
        courier_multi_setopt_ptr(multiHandle, CURLMOPT_TIMERDATA, me)
    }

    /// curl's request to watch (or stop watching) a socket.
    ///
    /// libcurl stops watching a connection when its transfer ends and watches it again when the
    /// next transfer reuses it: an ADD and a DEL per request. A socket parked for reading stays
    /// registered instead, and is removed only if it fires while curl does not want it (the
    /// peer closed it); registered for writing it would fire constantly, so that is removed at once.
    private func watch(_ descriptor: Int32, _ what: Int32) {
        let index = Int(descriptor)
        if index >= registered.count {
            let grow = index + 64 - registered.count
            registered.append(contentsOf: repeatElement(0, count: grow))
            wanted.append(contentsOf: repeatElement(0, count: grow))
        }
        if what == CURL_POLL_REMOVE {
            wanted[index] = 0
            if registered[index] & EPOLLOUT.rawValue != 0 { unregister(descriptor) }
            return
        }
        var mask: UInt32 = 0
        if what & CURL_POLL_IN != 0 { mask |= EPOLLIN.rawValue }
        if what & CURL_POLL_OUT != 0 { mask |= EPOLLOUT.rawValue }
        wanted[index] = mask
        guard mask != registered[index] else { return }
        if mask == 0 {
            unregister(descriptor)
            return
        }
        var result = courier_epoll_ctl(epollDescriptor, registered[index] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD,
                                       descriptor, mask)
        // Our table can be stale (a descriptor closed behind our back); the kernel knows best.
        if result != 0 && errno == ENOENT { result = courier_epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, descriptor, mask) }
        if result != 0 && errno == EEXIST { result = courier_epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, descriptor, mask) }
        registered[index] = result == 0 ? mask : 0
    }

    private func unregister(_ descriptor: Int32) {
        _ = courier_epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, descriptor, 0)
        registered[Int(descriptor)] = 0
    }

    func forget(_ descriptor: Int32) {
        let index = Int(descriptor)
        guard index < registered.count else { return }
        registered[index] = 0
        wanted[index] = 0
    }

    @exclusivity(unchecked) private var readyCount: Int32 = 0

    func wait(blocking: Bool, until: UInt64?) {
        var timeout: Int32 = 0
        if blocking {
            let wakeAt = switch (timerDeadline, until) {
            case let (curl?, own?): Optional(min(curl, own))
            case let (curl, own): curl ?? own
            }
            if let deadline = wakeAt {
                let now = MonotonicClock.nanoseconds()
                timeout = deadline <= now ? 0 : Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            } else {
                timeout = -1
            }
        }
        readyCount = courier_epoll_wait(epollDescriptor, events, 256, timeout)
    }

    func dispatch() -> Bool {
        var acted = false
        for index in 0..<Int(max(0, readyCount)) {
            let event = events[index]
            if event.fd == eventDescriptor {
                courier_eventfd_drain(eventDescriptor)
                continue
            }
            let wants = wanted[Int(event.fd)]
            if wants == 0 {
                unregister(event.fd) // a parked connection fired: curl will notice it is dead on reuse
                continue
            }
            curl_multi_socket_action(multiHandle, event.fd, Self.curlEvents(event.events, wanted: wants), &runningHandles)
            acted = true
        }
        readyCount = 0
        return runDueTimers() || acted
    }

    /// What an epoll event tells curl, read as curl's own poll loop reads one (`Curl_socket_check`
    /// in `lib/select.c`): an error or hang-up on a socket curl reads from makes it readable, so
    /// curl reads and meets the error or the end itself; on a socket it only writes to, it is an
    /// error. `CURL_CSELECT_ERR` alone makes curl fail with `CURLE_SEND_ERROR` without reading,
    /// so it would not re-send on a new connection a request whose kept-alive one the server had
    /// closed; and epoll can report a reset as `EPOLLERR | EPOLLHUP` without `EPOLLIN` on a socket
    /// watched for reading (Docs/Reliability.md).
    static func curlEvents(_ events: UInt32, wanted: UInt32) -> Int32 {
        var mask: Int32 = 0
        if events & EPOLLIN.rawValue != 0 { mask |= CURL_CSELECT_IN }
        if events & EPOLLOUT.rawValue != 0 { mask |= CURL_CSELECT_OUT }
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            if wanted & EPOLLIN.rawValue != 0 { mask |= CURL_CSELECT_IN }
            if wanted & EPOLLOUT.rawValue != 0 { mask |= CURL_CSELECT_ERR }
        }
        return mask
    }

    /// A bound, so a curl that kept asking for another action at once could not hold the loop.
    static let timerActionsPerTurn = 8

    func timerMayBeDue() {
        timerDeadline = 0
    }

    func runDueTimers() -> Bool {
        // curl often answers a timeout action with another timeout of 0 (a new transfer moves
        // through several states): run those now rather than one per loop turn and epoll_wait.
        var actions = 0
        while let deadline = timerDeadline, actions < Self.timerActionsPerTurn, MonotonicClock.nanoseconds() >= deadline {
            timerDeadline = nil // the callback may set a new one during the action
            curl_multi_socket_action(multiHandle, courier_socket_timeout, 0, &runningHandles)
            actions += 1
        }
        return actions > 0
    }

    func close() {
        Glibc.close(epollDescriptor)
        Glibc.close(eventDescriptor)
        events.deallocate()
    }
}
