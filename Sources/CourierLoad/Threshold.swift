import Foundation

/// A pass/fail condition on a result, as k6 has them: `p99<200ms`, `errors<0.1%`, `rps>=5000`.
///
/// Metrics: `p50`, `p99.9` (or `p(99.9)`), `mean`, `stdev`, `min`, `max` take a duration in `us`,
/// `ms` (the default) or `s`; `errors` takes a percentage (`0.1%`) or, without `%`, a count;
/// `rps` and `requests` take numbers. `<`, `<=`, `>` and `>=` compare. A scenario endpoint's
/// name before a colon scopes the condition to it: `create:p99<50ms`; so does a stage of a ramp,
/// by its number from 1: `stage=2:p99<50ms` (its figures come from the run's timeline, so
/// latencies are to two significant digits, and requests count in the second they ended).
///
/// Checks (``LoadCheck``) have pass rates: `checks>99.9%` judges every check together,
/// `check:status==200>99%` the check given with exactly that text.
public struct Threshold: Sendable, Equatable, CustomStringConvertible {
    public enum Metric: Sendable, Equatable {
        case percentile(Double)
        case mean, standardDeviation, min, max
        case errorRate, errorCount
        case requestsPerSecond, requests
        /// The open model's scheduled requests not sent (``LoadResult/dropped``): the whole run's.
        case dropped
        /// Passes as a fraction of evaluations: of the check with this expression, or of all (nil).
        case checkPassRate(String?)
    }

    public enum Comparison: String, Sendable, CaseIterable {
        case lessOrEqual = "<=", greaterOrEqual = ">=", less = "<", greater = ">"

        func holds(_ actual: Double, _ limit: Double) -> Bool {
            switch self {
            case .less: actual < limit
            case .lessOrEqual: actual <= limit
            case .greater: actual > limit
            case .greaterOrEqual: actual >= limit
            }
        }
    }

    /// The text it was parsed from.
    public let expression: String
    public let endpoint: String?
    /// The stage of a ramp the condition is scoped to, from 1.
    public let stage: Int?
    public let metric: Metric
    public let comparison: Comparison
    /// In the metric's base unit: microseconds, a fraction (0…1), a count or requests per second.
    public let limit: Double

    public var description: String { expression }

    public init(_ expression: String) throws {
        self.expression = expression
        // `check:EXPR>99%`: the check's own text may hold operators and spaces, so the threshold's
        // comparison is the last one, before the percentage that ends the expression.
        let trimmed = expression.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("check:") {
            guard let match = trimmed.dropFirst(6).wholeMatch(of: /(.+?)\s*(<=|>=|<|>)\s*([0-9.]+)%/),
                  let percent = Double(match.output.3), percent <= 100 else {
                throw LoadError.invalidThreshold("\(expression): expected check:CHECK, a comparison and a percentage, as check:status==200>99%")
            }
            let check = String(match.output.1)
            do { _ = try LoadCheck(check) } catch let error as LoadError { throw LoadError.invalidThreshold("\(expression): \(error.message)") }
            (endpoint, stage, metric, limit) = (nil, nil, .checkPassRate(check), percent / 100)
            comparison = Comparison(rawValue: String(match.output.2))!
            return
        }
        var text = Substring(expression.filter { !$0.isWhitespace })
        var scope: String?
        if let colon = text.firstIndex(of: ":") {
            scope = String(text[..<colon])
            text = text[text.index(after: colon)...]
            guard !(scope ?? "").isEmpty else { throw LoadError.invalidThreshold("\(expression): empty endpoint name") }
        }
        if let scope, scope.lowercased().hasPrefix("stage=") {
            guard let number = Int(scope.dropFirst(6)), number >= 1 else {
                throw LoadError.invalidThreshold("\(expression): \(scope) does not name a stage (stage=1 is the first)")
            }
            (stage, endpoint) = (number, nil)
        } else {
            (stage, endpoint) = (nil, scope)
        }
        guard let (operatorRange, comparison) = Self.findComparison(in: text) else {
            throw LoadError.invalidThreshold("\(expression): expected <, <=, > or >= (as in p99<200ms)")
        }
        self.comparison = comparison
        let name = text[..<operatorRange.lowerBound].lowercased()
        let value = text[operatorRange.upperBound...]
        (metric, limit) = try Self.parse(metric: name, value: String(value), expression: expression)
    }

    private static func findComparison(in text: Substring) -> (Range<Substring.Index>, Comparison)? {
        for comparison in Comparison.allCases { // two-character operators first
            if let range = text.range(of: comparison.rawValue) { return (range, comparison) }
        }
        return nil
    }

    private static func parse(metric name: String, value: String, expression: String) throws -> (Metric, Double) {
        func fail(_ why: String) -> LoadError { .invalidThreshold("\(expression): \(why)") }
        switch name {
        case "errors", "error", "errorrate", "error_rate":
            if value.hasSuffix("%") {
                guard let percent = Double(value.dropLast()), percent >= 0 else { throw fail("\(value) is not a percentage") }
                return (.errorRate, percent / 100)
            }
            guard let count = Double(value), count >= 0 else { throw fail("\(value) is not a count (add % for a rate)") }
            return (name == "errors" || name == "error" ? .errorCount : .errorRate, count)
        case "checks":
            guard value.hasSuffix("%"), let percent = Double(value.dropLast()), (0...100).contains(percent) else {
                throw fail("\(value) is not a percentage (checks>99.9%)")
            }
            return (.checkPassRate(nil), percent / 100)
        case "rps", "throughput", "requests/s":
            guard let number = Double(value), number >= 0 else { throw fail("\(value) is not a rate") }
            return (.requestsPerSecond, number)
        case "requests", "count":
            guard let number = Double(value), number >= 0 else { throw fail("\(value) is not a count") }
            return (.requests, number)
        case "dropped":
            guard let number = Double(value), number >= 0 else { throw fail("\(value) is not a count") }
            return (.dropped, number)
        default:
            let metric: Metric
            switch name {
            case "mean", "avg", "average": metric = .mean
            case "stdev", "stddev": metric = .standardDeviation
            case "min": metric = .min
            case "max": metric = .max
            case "median", "med": metric = .percentile(50)
            default:
                var digits = name.dropFirst()
                if digits.hasPrefix("(") && digits.hasSuffix(")") { digits = digits.dropFirst().dropLast() }
                guard name.hasPrefix("p"), let percentile = Double(digits), percentile > 0, percentile <= 100 else {
                    throw fail("unknown metric \"\(name)\" (p50…p99.99, mean, stdev, min, max, errors, rps, requests)")
                }
                metric = .percentile(percentile)
            }
            guard let microseconds = parseDuration(value) else { throw fail("\(value) is not a duration (as in 200ms, 1.5s, 900us)") }
            return (metric, microseconds)
        }
    }

    /// Microseconds in `text`: `900us`, `900µs`, `200ms`, `1.5s`; a bare number is milliseconds.
    static func parseDuration(_ text: String) -> Double? {
        let units: [(String, Double)] = [("us", 1), ("µs", 1), ("ms", 1000), ("s", 1_000_000)]
        let number: Double?, scale: Double
        if let (suffix, unitScale) = units.first(where: { text.hasSuffix($0.0) }) {
            number = Double(text.dropLast(suffix.count))
            scale = unitScale
        } else {
            number = Double(text)
            scale = 1000
        }
        // `inf`, `nan` and `1e400` parse as numbers; none is a duration.
        guard let number, number >= 0, (number * scale).isFinite else { return nil }
        return number * scale
    }

    /// Judges `result`; a threshold on an endpoint or a stage the result lacks fails.
    public func evaluate(_ result: LoadResult) -> ThresholdOutcome {
        var result = result
        if let stage {
            guard let figures = result.stageFigures(stage) else {
                return ThresholdOutcome(expression: expression, passed: false, actual: nil, display: "no stage \(stage) in the result")
            }
            result = figures
        }
        guard let actual = actualValue(in: result) else {
            if case .checkPassRate(let name?) = metric {
                return ThresholdOutcome(expression: expression, passed: false, actual: nil, display: "no check \"\(name)\" in the result")
            }
            return ThresholdOutcome(expression: expression, passed: false, actual: nil, display: "no endpoint \"\(endpoint ?? "")\"")
        }
        return ThresholdOutcome(expression: expression, passed: comparison.holds(actual, limit), actual: actual,
                                display: display(actual))
    }

    private func actualValue(in result: LoadResult) -> Double? {
        let latency: LatencyDistribution
        let requests: Int
        let errors: Int
        if let endpoint {
            guard let figures = result.endpoints[endpoint] else { return nil }
            (latency, requests, errors) = (figures.latency, figures.requests, figures.errors)
        } else {
            (latency, requests, errors) = (result.latency, result.requests, result.errors)
        }
        switch metric {
        case .percentile(let percentile): return Double(latency.value(atPercentile: percentile))
        case .mean: return latency.mean
        case .standardDeviation: return latency.standardDeviation
        case .min: return Double(latency.min)
        case .max: return Double(latency.max)
        case .errorRate: return requests > 0 ? Double(errors) / Double(requests) : 0
        case .errorCount: return Double(errors)
        case .requestsPerSecond: return result.durationSeconds > 0 ? Double(requests) / result.durationSeconds : 0
        case .requests: return Double(requests)
        case .dropped: return Double(result.dropped)
        case .checkPassRate(nil): return result.checkPassRate
        case .checkPassRate(let name?): return result.checks.first { $0.expression.trimmingCharacters(in: .whitespaces) == name }?.passRate
        }
    }

    private func display(_ actual: Double) -> String {
        switch metric {
        case .percentile, .mean, .standardDeviation, .min, .max: Format.latency(actual)
        case .errorRate, .checkPassRate: Format.percent(actual)
        case .errorCount, .requests, .dropped: Format.count(Int(saturating: actual)) // Double(Int.max) is one past Int.max
        case .requestsPerSecond: Format.rate(actual)
        }
    }
}

/// Whether a threshold held, and what was measured.
public struct ThresholdOutcome: Codable, Sendable, Equatable {
    public var expression: String
    public var passed: Bool
    /// In the metric's base unit (microseconds, a fraction, a count, requests per second).
    public var actual: Double?
    /// The measured value as reports show it (`2.31ms`, `0.12%`).
    public var display: String
}
