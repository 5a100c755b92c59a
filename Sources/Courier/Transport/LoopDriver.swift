import CCurl

/// How the event loop waits for curl's sockets and timers. Loop-confined except for ``waker``.
protocol LoopDriver: AnyObject {
    /// Waits for socket readiness, curl's timer or a wake-up (only when `blocking`), lets curl
    /// act on what happened and resolves finished transfers.
    /// `until` is a loop deadline of Courier's own (the idle sweep) that also ends a blocking wait.
    func poll(blocking: Bool, until: UInt64?)
    /// Interrupts a blocking ``poll(blocking:)`` from any thread.
    var waker: LoopWaker { get }
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
