import CCurl

/// How the event loop waits for curl's sockets and timers. Loop-confined except for ``waker``.
protocol LoopDriver: AnyObject {
    /// Waits in the kernel for socket readiness, curl's timer, `until` (a deadline of Courier's
    /// own) or a wake-up; returns at once when not `blocking`. The only call that sleeps.
    func wait(blocking: Bool, until: UInt64?)
    /// Lets curl act on what ``wait(blocking:until:)`` found; returns whether curl acted, and so
    /// may have finished transfers. Runs after the loop has marked itself awake, so the jobs
    /// that completions enqueue cost no wake-up.
    func dispatch() -> Bool
    /// Runs curl's timer if it is due (a transfer just added asks for one at once), before the
    /// loop waits: a new request goes out in the turn that submitted it, with no extra
    /// `epoll_wait`. Returns whether curl acted.
    func runDueTimers() -> Bool
    /// Runs curl's timer at the next ``runDueTimers()``, whatever curl last asked for: after a
    /// change curl may not have reported (see ``CurlMulti/detach(_:_:early:)``).
    func timerMayBeDue()
    /// Interrupts a blocking ``wait(blocking:until:)`` from any thread.
    var waker: LoopWaker { get }
    /// Curl opened or closed `descriptor`: drop what the driver remembers of an earlier socket with that number.
    func forget(_ descriptor: Int32)
    func close()
}

/// Wakes a sleeping loop. A plain value so it can live in the loop's inbox lock.
struct LoopWaker: Sendable {
    /// An eventfd (epoll driver), or -1.
    let eventDescriptor: Int32
    /// The multi handle's address (multi-poll driver), or 0.
    let multiAddress: UInt

    func wake() {
        if eventDescriptor >= 0 {
            _ = courier_eventfd_signal(eventDescriptor)
        } else if let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) {
            curl_multi_wakeup(multi)
        }
    }
}
