import CCurl

/// Drives libcurl with `curl_multi_perform` + `curl_multi_poll`, woken by `curl_multi_wakeup`.
///
/// Simpler than the socket interface, but `curl_multi_perform` visits every transfer on each
/// turn. Kept for the measured comparison in `Docs/Architecture.md`.
final class MultiPollDriver: LoopDriver {
    private let multiHandle: UnsafeMutableRawPointer
    private var runningHandles: Int32 = 0
    let waker: LoopWaker

    init(multiHandle: UnsafeMutableRawPointer) {
        self.multiHandle = multiHandle
        waker = LoopWaker(eventDescriptor: -1, multiAddress: UInt(bitPattern: multiHandle))
    }

    func wait(blocking: Bool, until: UInt64?) {
        if blocking {
            // curl shortens this to its own next timeout; a wake-up cuts it short.
            var timeout: Int32 = 1000
            if let until {
                let now = MonotonicClock.nanoseconds()
                timeout = until <= now ? 0 : min(timeout, Int32(clamping: (until - now + 999_999) / 1_000_000))
            }
            curl_multi_poll(multiHandle, nil, 0, timeout, nil)
        }
    }

    func dispatch() -> Bool {
        curl_multi_perform(multiHandle, &runningHandles)
        return true
    }

    func runDueTimers() -> Bool { false } // curl_multi_perform runs them

    func timerMayBeDue() {} // curl_multi_poll asks curl for its next timeout each time

    func forget(_ descriptor: Int32) {}

    func close() {}
}
