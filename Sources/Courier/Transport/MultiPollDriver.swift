import CCurl

/// Drives libcurl with `curl_multi_perform` + `curl_multi_poll`, woken by `curl_multi_wakeup`.
///
/// Simpler than the socket interface, but `curl_multi_perform` visits every transfer on each
/// turn. Kept for the measured comparison in `Docs/Architecture.md`.
final class MultiPollDriver: LoopDriver {
    private unowned let multi: CurlMulti
    private var runningHandles: Int32 = 0
    let waker: LoopWaker

    init(multi: CurlMulti) {
        self.multi = multi
        waker = LoopWaker(eventDescriptor: -1, multiAddress: UInt(bitPattern: multi.handle))
    }

    func wait(blocking: Bool, until: UInt64?) {
        if blocking {
            // curl shortens this to its own next timeout; a wake-up cuts it short.
            var timeout: Int32 = 1000
            if let until {
                let now = MonotonicClock.nanoseconds()
                timeout = until <= now ? 0 : min(timeout, Int32(clamping: (until - now + 999_999) / 1_000_000))
            }
            curl_multi_poll(multi.handle, nil, 0, timeout, nil)
        }
    }

    func dispatch() {
        curl_multi_perform(multi.handle, &runningHandles)
        multi.processCompletions()
    }

    func forget(_ descriptor: Int32) {}

    func close() {}
}
