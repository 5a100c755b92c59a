import Synchronization

/// Hands out the next request to workers and says when to stop.
///
/// In the open model each request has an intended start time: `start + n / rate` at a constant
/// rate, or where the integral of a ramping rate reaches `n` (``StageProfile``). Latency counts
/// from it, not from when a worker got round to it, so a stalled server's queue shows in the
/// percentiles instead of being hidden (coordinated omission, corrected as wrk2 does).
final class LoadSchedule: Sendable {
    /// When the run stops starting requests: after a count, after a time, or at whichever of
    /// the two comes first.
    struct Limit: Sendable {
        /// The whole run's requests, at most.
        var requests: Int?
        /// How long after its start the run starts requests.
        var nanoseconds: UInt64?

        static func duration(nanoseconds: UInt64) -> Limit { Limit(requests: nil, nanoseconds: nanoseconds) }
        static func requests(_ count: Int) -> Limit { Limit(requests: count, nanoseconds: nil) }
        static func requests(_ count: Int, within nanoseconds: UInt64) -> Limit { Limit(requests: count, nanoseconds: nanoseconds) }
    }

    let start: UInt64
    private let limit: Limit
    /// The whole run's arrival rate over time, in the open model.
    private let rate: StageProfile?
    /// Which of the whole run's request numbers are this process's (all of them unsharded).
    private let shard: LoadShard?
    private let issued = Atomic<Int>(0)
    /// Open model with a duration: how far behind its schedule the run may fall before the rest
    /// of its requests are not sent (the request timeout).
    private let lateness: UInt64
    /// The first of this process's requests (its local number) found due too late: none from
    /// it on is sent. Int.max while none is.
    private let firstDropped = Atomic<Int>(.max)

    /// - Parameters:
    ///   - limit: the whole run's: a sharded schedule sends its share of the requests, or of the
    ///     open model's slots within the duration.
    ///   - rate: the whole run's rate, so a shard's intended starts interleave with the others'.
    ///   - lateness: in the open model with a duration, how far behind its schedule the run may
    ///     fall: past the duration by that much, no request starts, and those left are counted
    ///     (``dropped``). wrk2 and k6 end at the duration too; without it, a rate no machine can
    ///     send (`--rate 1e300`) made a run that never ended.
    init(start: UInt64, limit: Limit, rate: StageProfile?, shard: LoadShard? = nil, lateness: UInt64 = .max) {
        self.start = start
        self.limit = limit
        self.lateness = lateness
        self.shard = shard
        self.rate = rate
    }

    struct Slot {
        /// The request's number in the whole run, which picks its scenario entry.
        var number: Int
        /// When the request should start (open model only).
        var intendedStart: UInt64?
    }

    /// This process's scheduled requests not sent because the run fell more than its lateness
    /// behind: those due within the duration from the first found too late on (every one before
    /// it got its slot). Read once the workers are done.
    var dropped: Int {
        let first = firstDropped.load(ordering: .relaxed)
        guard first != .max, let rate, let nanoseconds = limit.nanoseconds else { return 0 }
        let due = min(rate.dueCount(before: Double(nanoseconds) / 1e9), limit.requests ?? .max)
        return max(0, (shard?.share(of: due) ?? due) - first)
    }

    /// The next request's slot: nil once the run is over.
    func next() -> Slot? {
        let local = issued.wrappingAdd(1, ordering: .relaxed).oldValue
        let number = shard?.globalNumber(local) ?? local
        if let rate {
            guard let due = rate.dueTime(ofRequest: number) else { return nil }
            // Saturating: a rate of one request in years puts the next one past any clock.
            let (intended, overflow) = start.addingReportingOverflow(UInt64(saturating: due * 1e9))
            if overflow { return nil }
            if let count = limit.requests, number >= count { return nil }
            if let nanoseconds = limit.nanoseconds {
                if intended - start >= nanoseconds { return nil }
                let (deadline, overflow) = nanoseconds.addingReportingOverflow(lateness)
                if !overflow, monotonicNanoseconds() &- start >= deadline {
                    firstDropped.min(local, ordering: .relaxed)
                    return nil
                }
            }
            return Slot(number: number, intendedStart: intended)
        }
        if let count = limit.requests, number >= count { return nil }
        if let nanoseconds = limit.nanoseconds, monotonicNanoseconds() &- start >= nanoseconds { return nil }
        return Slot(number: number)
    }
}
