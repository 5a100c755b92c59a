import Foundation

/// A run's figures over time: requests, errors and latencies per interval, from which reports
/// draw throughput and percentiles over time.
///
/// Intervals start at one second and double (merging neighbours exactly) whenever a run would
/// need more than ``maximumIntervals``, so a run of any length keeps at most that many. Each
/// interval's latencies are an HDR histogram with two significant digits, so timelines from
/// several machines merge exactly, interval by interval.
public struct LoadTimeline: Codable, Sendable, Equatable {
    /// The most intervals a timeline keeps.
    public static let maximumIntervals = 600

    /// One interval's figures.
    public struct Interval: Codable, Sendable, Equatable {
        public var requests = 0
        public var errors = 0
        /// Latencies in microseconds, two significant digits.
        public var latency = LatencyDistribution(significantDigits: .two)

        public init() {}

        enum CodingKeys: String, CodingKey { case requests, errors, hdr }

        // Compact: the counts and the histogram alone. A summary per interval (percentiles, mean)
        // would cost a walk of the histogram each, 600 times at the end of a long run.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            requests = try container.decode(Int.self, forKey: .requests)
            errors = try container.decode(Int.self, forKey: .errors)
            latency = LatencyDistribution(histogram: try HistogramCoding.decode(try container.decode(String.self, forKey: .hdr)))
            guard LatencyDistribution.isStandard(latency.histogram, digits: .two), errors >= 0, errors <= requests else {
                throw LoadError.invalidResult("an interval's histogram is not laid out as a timeline's, or its errors exceed its requests")
            }
            guard latency.count == requests else {
                throw LoadError.invalidResult("an interval's \(requests) requests disagree with its histogram's \(latency.count)")
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(requests, forKey: .requests)
            try container.encode(errors, forKey: .errors)
            try container.encode(HistogramCoding.encode(latency.histogram), forKey: .hdr)
        }
    }

    /// When measuring began, in seconds since 1970 (the wall clock, so shards line up).
    public var startedAt: Double
    /// Seconds per interval: 1, 2, 4, …
    public private(set) var intervalSeconds: Int
    /// Interval `i` covers the seconds `i × intervalSeconds ..< (i + 1) × intervalSeconds` after ``startedAt``.
    public private(set) var intervals: [Interval]

    public init(startedAt: Double, intervalSeconds: Int = 1, intervals: [Interval] = []) {
        self.startedAt = startedAt
        self.intervalSeconds = max(1, intervalSeconds)
        self.intervals = intervals
    }

    enum CodingKeys: String, CodingKey { case startedAt, intervalSeconds, intervals }

    /// The longest interval a file may give: 2⁴⁰ s, so doubling and shifting stay within `Int`.
    static let longestInterval = 1 << 40

    /// Checked, since merging divides by the width and lines timelines up by their start: a
    /// start a finite number of seconds within ±10¹¹ of 1970 (about the year 5000), a width that
    /// is a power of two up to ``longestInterval``, at most ``maximumIntervals`` intervals.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        startedAt = try container.decode(Double.self, forKey: .startedAt)
        intervalSeconds = try container.decode(Int.self, forKey: .intervalSeconds)
        intervals = try container.decode([Interval].self, forKey: .intervals)
        guard startedAt.isFinite, abs(startedAt) <= 1e11 else { throw LoadError.invalidResult("the timeline's start \(startedAt) is not a time") }
        guard intervalSeconds >= 1, intervalSeconds <= Self.longestInterval, intervalSeconds & (intervalSeconds - 1) == 0 else {
            throw LoadError.invalidResult("the timeline's interval of \(intervalSeconds) s is not a power of two up to 2^40")
        }
        guard intervals.count <= Self.maximumIntervals else {
            throw LoadError.invalidResult("the timeline has \(intervals.count) intervals, more than \(Self.maximumIntervals)")
        }
    }

    /// Records a request that ended `seconds` after ``startedAt``.
    public mutating func record(atSecond seconds: Double, failed: Bool, microseconds: UInt64) {
        // Held within a run's reach (10¹¹ s): a clock read wrong must not trap or grow the timeline forever.
        let index = slot(for: Int(saturating: min(max(0, seconds), 1e11)))
        intervals[index].requests += 1
        if failed { intervals[index].errors += 1 }
        intervals[index].latency.record(microseconds: microseconds)
    }

    /// Adds a timeline recorded side by side, on this or another machine: intervals are lined up
    /// by wall clock to the nearest interval, so clocks a fraction of a second apart still
    /// agree; every count and histogram adds exactly.
    public mutating func merge(_ other: LoadTimeline) {
        let start = min(startedAt, other.startedAt)
        var other = other
        let width = max(intervalSeconds, other.intervalSeconds)
        while intervalSeconds < width { coarsen() }
        while other.intervalSeconds < width { other.coarsen() }
        // Saturating: a decoded start is checked (see init(from:)); one set in code may be anything.
        let ownShift = Int(saturating: min((startedAt - start) / Double(width), 1e12).rounded())
        let otherShift = Int(saturating: min((other.startedAt - start) / Double(width), 1e12).rounded())
        var merged = LoadTimeline(startedAt: start, intervalSeconds: width)
        merged.add(self, shiftedBy: ownShift)
        merged.add(other, shiftedBy: otherShift)
        self = merged
    }

    /// Requests per second in each interval.
    public var requestsPerSecond: [Double] { intervals.map { Double($0.requests) / Double(intervalSeconds) } }

    // MARK: Internals

    /// The index of the interval holding second `second`, growing or coarsening the timeline as needed.
    private mutating func slot(for second: Int) -> Int {
        while second / intervalSeconds >= Self.maximumIntervals { coarsen() }
        let index = second / intervalSeconds
        if index >= intervals.count { intervals += Array(repeating: Interval(), count: index + 1 - intervals.count) }
        return index
    }

    /// Doubles the interval, adding neighbours together.
    private mutating func coarsen() {
        var halved: [Interval] = []
        halved.reserveCapacity((intervals.count + 1) / 2)
        var index = 0
        while index < intervals.count {
            var pair = intervals[index]
            if index + 1 < intervals.count { pair.add(intervals[index + 1]) }
            halved.append(pair)
            index += 2
        }
        intervals = halved
        intervalSeconds = intervalSeconds > Int.max / 2 ? Int.max : intervalSeconds * 2
    }

    private mutating func add(_ other: LoadTimeline, shiftedBy shift: Int) {
        let width = other.intervalSeconds // this timeline's may double while adding
        for (offset, interval) in other.intervals.enumerated() {
            let (second, overflow) = (offset + max(0, shift)).multipliedReportingOverflow(by: width)
            let index = slot(for: overflow ? Int.max : second)
            intervals[index].add(interval)
        }
    }
}

extension LoadTimeline.Interval {
    mutating func add(_ other: LoadTimeline.Interval) {
        requests = Count.sum(requests, other.requests)
        errors = Count.sum(errors, other.errors)
        latency.add(other.latency)
    }
}
