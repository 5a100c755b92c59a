import CCurl
import Glibc

/// Drives libcurl through its socket interface over epoll, with an eventfd for wake-ups.
///
/// curl tells us which sockets to watch (`CURLMOPT_SOCKETFUNCTION`) and when to call it back
/// (`CURLMOPT_TIMERFUNCTION`); we call `curl_multi_socket_action` only for sockets that are
/// ready. Work per loop turn is proportional to activity, not to the number of transfers.
final class EpollDriver: LoopDriver {
    private unowned let multi: CurlMulti
    private let epollDescriptor: Int32
    private let eventDescriptor: Int32
    /// Registered epoll events per descriptor (0 when not registered), indexed by fd.
    private var registered: [UInt32] = []
    private var timerDeadline: UInt64?
    private let events = UnsafeMutablePointer<courier_event>.allocate(capacity: 256)
    private var runningHandles: Int32 = 0

    let waker: LoopWaker

    init(multi: CurlMulti) throws(TransportError) {
        self.multi = multi
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
        courier_multi_setopt_socket_cb(multi.handle) { _, descriptor, what, userp, _ in
            Unmanaged<EpollDriver>.fromOpaque(userp!).takeUnretainedValue().watch(descriptor, what)
            return 0
        }
        courier_multi_setopt_ptr(multi.handle, CURLMOPT_SOCKETDATA, me)
        courier_multi_setopt_timer_cb(multi.handle) { _, timeout, userp in
            let driver = Unmanaged<EpollDriver>.fromOpaque(userp!).takeUnretainedValue()
            driver.timerDeadline = timeout < 0 ? nil : MonotonicClock.nanoseconds() + UInt64(timeout) * 1_000_000
            return 0
        }
        courier_multi_setopt_ptr(multi.handle, CURLMOPT_TIMERDATA, me)
    }

    /// curl's request to watch (or stop watching) a socket.
    private func watch(_ descriptor: Int32, _ what: Int32) {
        let index = Int(descriptor)
        if index >= registered.count { registered.append(contentsOf: repeatElement(0, count: index + 64 - registered.count)) }
        if what == CURL_POLL_REMOVE {
            if registered[index] != 0 {
                _ = courier_epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, descriptor, 0)
                registered[index] = 0
            }
            return
        }
        var wanted: UInt32 = 0
        if what & CURL_POLL_IN != 0 { wanted |= EPOLLIN.rawValue }
        if what & CURL_POLL_OUT != 0 { wanted |= EPOLLOUT.rawValue }
        guard wanted != registered[index] else { return }
        var result = courier_epoll_ctl(epollDescriptor, registered[index] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD,
                                       descriptor, wanted)
        // curl may close a socket and get the same number back; our table can be stale either way.
        if result != 0 && errno == ENOENT { result = courier_epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, descriptor, wanted) }
        if result != 0 && errno == EEXIST { result = courier_epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, descriptor, wanted) }
        registered[index] = result == 0 ? wanted : 0
    }

    func poll(blocking: Bool, until: UInt64?) {
        var timeout: Int32 = 0
        if blocking {
            let curlDeadline = timerDeadline
            let wakeAt = switch (curlDeadline, until) {
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
        let count = courier_epoll_wait(epollDescriptor, events, 256, timeout)
        var acted = false
        if count > 0 {
            for index in 0..<Int(count) {
                let event = events[index]
                if event.fd == eventDescriptor {
                    courier_eventfd_drain(eventDescriptor)
                    continue
                }
                var mask: Int32 = 0
                if event.events & EPOLLIN.rawValue != 0 { mask |= CURL_CSELECT_IN }
                if event.events & EPOLLOUT.rawValue != 0 { mask |= CURL_CSELECT_OUT }
                if event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { mask |= CURL_CSELECT_ERR }
                curl_multi_socket_action(multi.handle, event.fd, mask, &runningHandles)
                acted = true
            }
        }
        if let deadline = timerDeadline, MonotonicClock.nanoseconds() >= deadline {
            timerDeadline = nil // the callback may set a new one during the action
            curl_multi_socket_action(multi.handle, courier_socket_timeout, 0, &runningHandles)
            acted = true
        }
        if acted { multi.processCompletions() }
    }

    func close() {
        Glibc.close(epollDescriptor)
        Glibc.close(eventDescriptor)
        events.deallocate()
    }
}
