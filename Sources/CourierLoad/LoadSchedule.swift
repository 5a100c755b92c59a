import Synchronization

/// Hands out the next request to workers and says when to stop.
///
/// In the open model each request has an intended start time, `start + n / rate`; latency counts
/// from it, not from when a worker got round to it, so a stalled server's queue shows in the
/// percentiles instead of being hidden (coordinated omission, corrected as wrk2 does).
final class LoadSchedule: Sendable {
    enum Limit: Sendable {
        case duration(nanoseconds: UInt64)
        case requests(Int)
    }

    let start: UInt64
    private let limit: Limit
    /// Nanoseconds between intended starts, in the open model.
    private let interval: Double?
    private let issued = Atomic<Int>(0)

    init(start: UInt64, limit: Limit, rate: Double?) {
        self.start = start
        self.limit = limit
        interval = rate.map { 1e9 / $0 }
    }

    struct Slot {
        /// When the request should start (open model only).
        var intendedStart: UInt64?
    }

    /// The next request's slot: nil once the run is over.
    func next() -> Slot? {
        if let interval {
            let number = issued.wrappingAdd(1, ordering: .relaxed).oldValue
            let intended = start + UInt64(Double(number) * interval)
            switch limit {
            case .duration(let nanoseconds): if intended >= start + nanoseconds { return nil }
            case .requests(let count): if number >= count { return nil }
            }
            return Slot(intendedStart: intended)
        }
        switch limit {
        case .duration(let nanoseconds):
            return monotonicNanoseconds() < start + nanoseconds ? Slot() : nil
        case .requests(let count):
            return issued.wrappingAdd(1, ordering: .relaxed).oldValue < count ? Slot() : nil
        }
    }
}
