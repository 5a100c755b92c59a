import Foundation

/// Two runs set side by side, figure by figure: the change, its confidence interval, and whether
/// it is more than noise, as benchstat reports benchmarks.
///
/// Each figure's interval comes from a block bootstrap over the runs' timelines: the seconds of
/// each run are drawn with replacement, many times, and the figure recomputed from the drawn
/// seconds' histograms. A change is significant when its interval excludes zero, and reported as
/// better or worse only when it is also at least ``Settings/tolerance`` (latency and rate) or
/// ``Settings/errorTolerance`` (error rate): two runs of the same service minutes apart differ by
/// a little for reasons no run can see from inside.
///
/// ```swift
/// let comparison = try LoadComparison(base: try LoadResult.decode(old), new: try LoadResult.decode(new))
/// print(LoadComparisonReport(comparison).text)
/// if comparison.regressed { exit(99) }
/// ```
public struct LoadComparison: Codable, Sendable, Equatable {
    /// How changes are judged.
    public struct Settings: Codable, Sendable, Equatable {
        /// The confidence of each interval (0.5…0.999).
        public var confidence: Double
        /// The smallest relative change of a latency or of the rate reported as one (0.05: 5 %).
        public var tolerance: Double
        /// The smallest change of the error rate reported as one, as a fraction (0.001: 0.1 points).
        public var errorTolerance: Double
        /// Bootstrap replicates per figure.
        public var replicates: Int
        /// The generator's seed: the same two results and seed always give the same intervals.
        public var seed: UInt64

        public init(confidence: Double = 0.95, tolerance: Double = 0.05, errorTolerance: Double = 0.001,
                    replicates: Int = 2000, seed: UInt64 = 1) {
            self.confidence = confidence
            self.tolerance = tolerance
            self.errorTolerance = errorTolerance
            self.replicates = replicates
            self.seed = seed
        }

        /// Throws ``LoadError/invalidArgument(_:)`` naming the setting out of range.
        public func validate() throws {
            guard (0.5...0.999).contains(confidence) else {
                throw LoadError.invalidArgument("--confidence \(Format.number(confidence * 100))%: expected 50% to 99.9%")
            }
            guard tolerance >= 0, errorTolerance >= 0 else {
                throw LoadError.invalidArgument("--tolerance and --error-tolerance cannot be negative")
            }
            guard (100...1_000_000).contains(replicates) else {
                throw LoadError.invalidArgument("--replicates \(replicates): expected 100 to 1,000,000")
            }
        }
    }

    /// A figure of a run.
    public enum Metric: Codable, Sendable, Hashable {
        /// Latency at this percentile.
        case percentile(Double)
        /// Mean latency.
        case mean
        /// Requests completed per second.
        case requestsPerSecond
        /// Errors as a fraction of requests; compared by difference, not ratio.
        case errorRate

        /// `p50`, `p99.9`, `mean`, `requests/s`, `errors`.
        public var name: String {
            switch self {
            case .percentile(let percentile): "p" + LatencyDistribution.label(percentile)
            case .mean: "mean"
            case .requestsPerSecond: "requests/s"
            case .errorRate: "errors"
            }
        }

        /// Whether a larger value is the better one.
        var higherIsBetter: Bool { self == .requestsPerSecond }

        /// The figure ``name`` names.
        public init?(name: String) {
            switch name {
            case "mean": self = .mean
            case "requests/s": self = .requestsPerSecond
            case "errors": self = .errorRate
            default:
                guard name.hasPrefix("p"), let percentile = Double(name.dropFirst()), (0...100).contains(percentile) else { return nil }
                self = .percentile(percentile)
            }
        }

        // In JSON by name ("p99"), as people and `jq` read it.
        public init(from decoder: any Decoder) throws {
            let name = try decoder.singleValueContainer().decode(String.self)
            guard let metric = Metric(name: name) else {
                throw LoadError.invalidResult("\(name) is not a compared figure (p50, mean, requests/s, errors)")
            }
            self = metric
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(name)
        }
    }

    /// What a change amounts to.
    public enum Verdict: String, Codable, Sendable {
        case better, worse
        /// Within the interval's noise or the tolerance.
        case unchanged
    }

    /// One figure of both runs.
    public struct Row: Codable, Sendable, Equatable {
        public var metric: Metric
        /// The base run's figure: microseconds, requests per second, or a fraction for errors.
        public var base: Double
        public var new: Double
        /// The relative change (`new / base − 1`); for ``Metric/errorRate`` the difference `new − base`.
        public var change: Double
        /// The change's confidence interval, in the same terms as ``change``.
        public var low: Double
        public var high: Double
        public var verdict: Verdict

        /// The verdict in the figure's terms: `faster`/`slower` (latency), `higher`/`lower`
        /// (requests/s), `fewer`/`more` (errors), or `~`.
        public var word: String {
            guard verdict != .unchanged else { return "~" }
            let up = change > 0
            return switch metric {
            case .percentile, .mean: up ? "slower" : "faster"
            case .requestsPerSecond: up ? "higher" : "lower"
            case .errorRate: up ? "more" : "fewer"
            }
        }
    }

    public var settings: Settings
    /// The two runs' targets, as their results name them.
    public var baseTarget: String
    public var newTarget: String
    public var rows: [Row]
    /// Latency percentiles left out: a run had too few requests beyond them to say anything.
    public var omitted: [Double]

    /// The JSON form (`courier load compare --json`), written as results are.
    public func jsonData() throws -> Data {
        try LoadResult.encoder.encode(self)
    }

    /// Whether any figure got worse: what a CI gate fails on.
    public var regressed: Bool { rows.contains { $0.verdict == .worse } }

    /// The percentiles compared, when each run has at least ``tailRequests`` requests beyond them.
    public static let percentiles: [Double] = [50, 90, 99, 99.9]
    static let tailRequests = 10
    /// Fewer intervals than this cannot show a run's variation.
    public static let minimumIntervals = 5

    /// Compares `new` against `base`.
    ///
    /// - Throws: ``LoadError/invalidArgument(_:)`` for settings out of range, and
    ///   ``LoadError/invalidResult(_:)`` when a run has no timeline or fewer than
    ///   ``minimumIntervals`` intervals with requests.
    /// - Parameter names: what errors call the two runs (their files, for the command line).
    public init(base: LoadResult, new: LoadResult, settings: Settings = Settings(), names: (base: String, new: String) = ("base", "new")) throws {
        try settings.validate()
        let baseSampler = try Self.resampler(base, name: names.base)
        let newSampler = try Self.resampler(new, name: names.new)
        self.settings = settings
        baseTarget = base.target
        newTarget = new.target

        var metrics: [Metric] = []
        omitted = []
        for percentile in Self.percentiles {
            // (100 − 99.9) is 0.0999…: the slack keeps 10,000 requests enough for p99.9.
            let enough = [base, new].allSatisfy { Double($0.latency.count) * (100 - percentile) / 100 >= Double(Self.tailRequests) - 1e-6 }
            if enough { metrics.append(.percentile(percentile)) } else { omitted.append(percentile) }
        }
        metrics += [.mean, .requestsPerSecond, .errorRate]

        // Each replicate draws both runs once and yields every figure, so the figures of one
        // replicate come from the same draw (as their correlation in a run demands).
        var generator = SeededGenerator(seed: settings.seed)
        var changes = Array(repeating: [Double](), count: metrics.count)
        for index in changes.indices { changes[index].reserveCapacity(settings.replicates) }
        for _ in 0..<settings.replicates {
            let drawnBase = baseSampler.sample(using: &generator)
            let drawnNew = newSampler.sample(using: &generator)
            for (index, metric) in metrics.enumerated() {
                let before = Self.figure(metric, of: drawnBase, values: baseSampler.values)
                let after = Self.figure(metric, of: drawnNew, values: newSampler.values)
                changes[index].append(Self.change(metric, from: before, to: after))
            }
        }

        rows = metrics.enumerated().map { index, metric in
            let before = Self.figure(metric, of: base), after = Self.figure(metric, of: new)
            let change = Self.change(metric, from: before, to: after)
            // The replicates' spread, centred on the whole run's change: replicates see latencies
            // to two significant digits (the timeline's), the whole run to three, and the
            // difference of rounding must not put a change outside its own interval.
            let sorted = changes[index].sorted()
            let tail = (1 - settings.confidence) / 2
            let centre = Self.quantile(sorted, 0.5)
            let low = change + Self.quantile(sorted, tail) - centre, high = change + Self.quantile(sorted, 1 - tail) - centre
            let tolerance = metric == .errorRate ? settings.errorTolerance : settings.tolerance
            var verdict = Verdict.unchanged
            if (low > 0 || high < 0) && abs(change) >= tolerance && abs(change) > 0 {
                verdict = (change > 0) == metric.higherIsBetter ? .better : .worse
            }
            return Row(metric: metric, base: before, new: after, change: change, low: low, high: high, verdict: verdict)
        }
    }

    private static func resampler(_ result: LoadResult, name: String) throws -> IntervalResampler {
        guard let timeline = result.timeline else {
            throw LoadError.invalidResult("\(name) has no timeline (written before Courier recorded one): it cannot be compared")
        }
        let sampler = IntervalResampler(timeline, durationSeconds: result.durationSeconds)
        let measured = sampler.requests.filter { $0 > 0 }.count
        guard measured >= minimumIntervals else {
            throw LoadError.invalidResult("\(name) has \(measured) interval\(measured == 1 ? "" : "s") with requests; a comparison needs "
                + "at least \(minimumIntervals) (run for \(minimumIntervals) s or more) to tell a change from noise")
        }
        return sampler
    }

    /// The figure of a whole run, from its own (three-digit) histogram.
    private static func figure(_ metric: Metric, of result: LoadResult) -> Double {
        switch metric {
        case .percentile(let percentile): Double(result.latency.value(atPercentile: percentile))
        case .mean: result.latency.mean
        case .requestsPerSecond: result.requestsPerSecond
        case .errorRate: result.errorRate
        }
    }

    private static func figure(_ metric: Metric, of sample: IntervalResampler.Sample, values: [UInt64]) -> Double {
        switch metric {
        case .percentile(let percentile): sample.value(atPercentile: percentile, values: values)
        case .mean: sample.mean(values: values)
        case .requestsPerSecond: sample.fullSeconds > 0 ? Double(sample.fullRequests) / sample.fullSeconds : 0
        case .errorRate: sample.requests > 0 ? Double(sample.errors) / Double(sample.requests) : 0
        }
    }

    private static func change(_ metric: Metric, from before: Double, to after: Double) -> Double {
        if metric == .errorRate { return after - before }
        // A base of zero cannot happen for a run with requests; 0 keeps the JSON finite regardless.
        return before > 0 ? after / before - 1 : 0
    }

    /// The `fraction` quantile of sorted values, interpolated between neighbours.
    private static func quantile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let position = fraction * Double(sorted.count - 1)
        let lower = min(max(0, Int(saturating: position.rounded(.down))), sorted.count - 1), upper = min(sorted.count - 1, lower + 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }
}
