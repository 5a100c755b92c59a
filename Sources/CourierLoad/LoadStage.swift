/// One stage of a ramping run, as k6's ramping executors have them: over ``seconds``, the open
/// model's arrival rate (or the closed model's requests in flight) moves in a straight line from
/// where the previous stage ended to ``target``.
public struct LoadStage: Codable, Sendable, Hashable {
    /// The stage's length in seconds.
    public var seconds: Double
    /// Requests per second (open model) or requests in flight (closed model) at the stage's end.
    public var target: Double

    /// - Throws: ``LoadError/invalidArgument(_:)`` unless the length is positive and the target
    ///   is a finite number, at least 0.
    public init(duration: Duration, target: Double) throws {
        try self.init(seconds: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18, target: target)
    }

    private init(seconds: Double, target: Double) throws {
        try Self.check(seconds: seconds, target: target)
        self.seconds = seconds
        self.target = target
    }

    /// What a stage must be; checked again before a run, since both fields are `var`s.
    static func check(seconds: Double, target: Double) throws {
        guard seconds > 0, seconds.isFinite else { throw LoadError.invalidArgument("a stage lasts longer than 0 s") }
        guard target >= 0, target.isFinite else {
            throw LoadError.invalidArgument("a stage's target is a finite number, at least 0, not \(target)")
        }
    }

    enum CodingKeys: String, CodingKey { case seconds, target }

    /// Checked as ``init(duration:target:)`` checks: a result file's stages divide by their length.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(seconds: try container.decode(Double.self, forKey: .seconds), target: try container.decode(Double.self, forKey: .target))
    }
}

/// A quantity that moves in straight lines between stage targets: the open model's arrival rate
/// or the closed model's requests in flight, as a function of the seconds since the run started.
///
/// For the open model it also answers the inverse: when request `n` is due. The number of
/// requests due by `t` is the integral of the rate, a quadratic within each stage, so each
/// request's intended start has a closed form and the schedule stays exact at any rate, ramp or
/// not, and across shards (which deal request numbers round-robin, as they do at a constant rate).
struct StageProfile: Sendable {
    struct Segment: Sendable {
        /// Seconds since the run started.
        var start: Double
        var seconds: Double
        /// The value at the segment's start, and its change per second.
        var from: Double
        var slope: Double
        /// Requests due before the segment (open model).
        var countBefore: Double
        var count: Double { seconds.isInfinite ? .infinity : (from + slope * seconds / 2) * seconds }
        var to: Double { seconds.isInfinite ? from : from + slope * seconds }
    }

    let segments: [Segment]

    /// Starts at `initial` and follows `stages`; the profile ends with the last stage.
    init(initial: Double, stages: [LoadStage]) {
        var segments: [Segment] = []
        var start = 0.0, value = initial, count = 0.0
        for stage in stages {
            let segment = Segment(start: start, seconds: stage.seconds, from: value,
                                  slope: (stage.target - value) / stage.seconds, countBefore: count)
            segments.append(segment)
            start += stage.seconds
            count += segment.count
            value = stage.target
        }
        self.segments = segments
    }

    /// A constant `value` for ever.
    init(constant value: Double) {
        segments = [Segment(start: 0, seconds: .infinity, from: value, slope: 0, countBefore: 0)]
    }

    /// Seconds from the start to the end of the last stage.
    var totalSeconds: Double { segments.last.map { $0.start + $0.seconds } ?? 0 }

    /// The value `seconds` after the start; 0 past the end.
    func value(at seconds: Double) -> Double {
        guard let segment = segments.last(where: { $0.start <= seconds }), seconds < segment.start + segment.seconds else { return 0 }
        return segment.from + segment.slope * (seconds - segment.start)
    }

    /// Open model: how many requests are due before `seconds` after the start (the integral of
    /// the rate, rounded up: request `n` is due when it reaches `n`), held at Int.max.
    func dueCount(before seconds: Double) -> Int {
        guard let segment = segments.last(where: { $0.start <= seconds }) else { return 0 }
        let elapsed = min(seconds - segment.start, segment.seconds)
        let due = (segment.countBefore + (segment.from + segment.slope * elapsed / 2) * elapsed).rounded(.up)
        return Int(exactly: max(0, due)) ?? .max // not finite, or past Int
    }

    /// Open model: the seconds after the start at which request `number` (from 0) is due, the
    /// moment the integral of the rate reaches `number`; nil when the profile ends before it.
    func dueTime(ofRequest number: Int) -> Double? {
        let n = Double(number)
        guard let segment = segments.last(where: { $0.countBefore <= n }), n < segment.countBefore + segment.count else { return nil }
        let m = n - segment.countBefore
        let a = segment.from, k = segment.slope
        // a·t + k·t²/2 = m, solved in the form that stays accurate when k is small or negative.
        let t = k == 0 ? m / a : 2 * m / (a + (max(0, a * a + 2 * k * m)).squareRoot())
        return segment.start + (t.isFinite ? min(t, segment.seconds) : 0)
    }

    /// Closed model: the first moment at or after `seconds` when the value exceeds `level` (worker
    /// number `level` runs while more than `level` requests may be in flight); nil if never again.
    func firstTime(above level: Double, atOrAfter seconds: Double) -> Double? {
        for segment in segments where segment.start + segment.seconds > seconds {
            let from = max(seconds, segment.start)
            let value = segment.from + segment.slope * (from - segment.start)
            if value > level { return from }
            guard segment.slope > 0, segment.to > level else { continue }
            // Rising through `level` within this segment: just after the crossing.
            return segment.start + (level - segment.from) / segment.slope + 1e-9
        }
        return nil
    }

    /// The largest value the profile reaches.
    var peak: Double { segments.map { max($0.from, $0.to) }.max() ?? 0 }
}

extension LoadResult {
    /// Seconds from the start of the run to the start and end of each stage of its ramp.
    public var stageBoundaries: [(start: Double, end: Double)] {
        var start = 0.0
        return (ramp?.stages ?? []).map { stage in
            defer { start += stage.seconds }
            return (start, start + stage.seconds)
        }
    }

    /// The ramp in words for reports: `ramping to 100 → 1000 → 0 requests/s in 3 stages`.
    var rampDescription: String? {
        guard let ramp else { return nil }
        let targets = ramp.stages.map { Format.number($0.target) }.joined(separator: " → ")
        return "ramping to \(targets) \(ramp.kind == .rate ? "requests/s" : "in flight") in \(ramp.stages.count) stage\(ramp.stages.count == 1 ? "" : "s")"
    }

    /// The figures of stage `number` (from 1), from the timeline's intervals that begin within
    /// it: requests, errors and latencies (two significant digits), and the stage's length as
    /// the duration. Nil without a ramp, a timeline or such a stage.
    func stageFigures(_ number: Int) -> LoadResult? {
        let boundaries = stageBoundaries
        guard let timeline, boundaries.indices.contains(number - 1) else { return nil }
        let (start, end) = boundaries[number - 1]
        var figures = LoadResult(target: target, model: model, concurrency: concurrency, rate: rate, durationSeconds: end - start,
                                 latency: LatencyDistribution(significantDigits: .two))
        for (index, interval) in timeline.intervals.enumerated() {
            let begins = Double(index * timeline.intervalSeconds)
            guard begins >= start - 1e-9, begins < end - 1e-9 else { continue }
            figures.requests += interval.requests
            figures.errors += interval.errors
            figures.latency.add(interval.latency)
        }
        return figures
    }
}
