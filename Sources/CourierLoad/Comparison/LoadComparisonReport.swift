import Foundation

/// A comparison as text, laid out like benchstat's:
///
/// ```text
/// courier load compare
///   base  http://127.0.0.1:8080/delay/20  (2,391 requests, 6.00s)
///   new   http://127.0.0.1:8080/delay/24  (2,005 requests, 6.00s)
///
///                    base         new    change   95% interval
///   p50          20.35ms     24.38ms   +19.80%   [+19.61%, +20.02%]   slower
///   p99          21.20ms     25.30ms   +19.34%   [+18.50%, +20.81%]   slower
///   requests/s    398.50      334.17   -16.14%   [-16.30%, -15.98%]   lower
///   errors         0.00%       0.00%   +0.00pt   [+0.00pt, +0.00pt]   ~
///
/// Worse: p50, p90, p99, mean, requests/s.
/// ```
public struct LoadComparisonReport: Sendable {
    public let comparison: LoadComparison
    public let baseName: String
    public let newName: String
    let base: LoadResult
    let new: LoadResult

    public init(_ comparison: LoadComparison, base: LoadResult, new: LoadResult, names: (base: String, new: String) = ("base", "new")) {
        self.comparison = comparison
        self.base = base
        self.new = new
        baseName = names.base
        newName = names.new
    }

    public var text: String {
        var lines = ["courier load compare"]
        let width = max(baseName.count, newName.count)
        for (name, result) in [(baseName, base), (newName, new)] {
            lines.append("  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(result.target)  (\(Format.count(result.requests)) requests, \(Format.seconds(result.durationSeconds)))")
        }
        lines.append("")
        let confidence = Format.percentNumber(comparison.settings.confidence) + "% interval"
        var table = [["", "base", "new", "change", confidence, ""]]
        for row in comparison.rows {
            table.append([row.metric.name, Self.value(row.metric, row.base), Self.value(row.metric, row.new),
                          Self.change(row.metric, row.change), "[\(Self.change(row.metric, row.low)), \(Self.change(row.metric, row.high))]",
                          row.word])
        }
        let widths = (0..<6).map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            var line = "  " + row[0].padding(toLength: widths[0], withPad: " ", startingAt: 0)
            for column in 1...3 { line += "  " + String(repeating: " ", count: widths[column] - row[column].count) + row[column] }
            line += "   " + row[4].padding(toLength: widths[4], withPad: " ", startingAt: 0) + "   " + row[5]
            lines.append(line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression))
        }
        lines.append("")
        if !comparison.omitted.isEmpty {
            lines.append("Not compared: " + comparison.omitted.map { "p" + LatencyDistribution.label($0) }.joined(separator: ", ")
                + " (fewer than \(LoadComparison.tailRequests) requests beyond it in a run).")
        }
        let tolerance = Format.percentNumber(comparison.settings.tolerance)
        let errorTolerance = Format.percentNumber(comparison.settings.errorTolerance)
        lines.append("~: the interval includes no change, or the change is under \(tolerance)% (errors: \(errorTolerance) points).")
        let worse = comparison.rows.filter { $0.verdict == .worse }.map(\.metric.name)
        lines.append(worse.isEmpty ? "No figure got significantly worse." : "Worse: \(worse.joined(separator: ", ")).")
        return lines.joined(separator: "\n") + "\n"
    }

    static func value(_ metric: LoadComparison.Metric, _ value: Double) -> String {
        switch metric {
        case .percentile, .mean: Format.latency(value)
        case .requestsPerSecond: Format.rate(value)
        case .errorRate: Format.percent(value)
        }
    }

    /// A relative change as `+19.80%`; the error rate's difference as `+0.12pt`.
    static func change(_ metric: LoadComparison.Metric, _ change: Double) -> String {
        metric == .errorRate ? String(format: "%+.2fpt", change * 100) : String(format: "%+.2f%%", change * 100)
    }
}
