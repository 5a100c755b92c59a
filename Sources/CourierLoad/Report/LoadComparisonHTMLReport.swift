import Foundation

/// A comparison as one self-contained HTML page: the table of changes, and the two runs overlaid
/// (the percentile curve, requests per second and p99 over time, each run from its own start).
/// Same look and rules as ``LoadHTMLReport``: inline SVG, no script, light and dark.
public struct LoadComparisonHTMLReport: Sendable {
    public let report: LoadComparisonReport

    public init(_ report: LoadComparisonReport) {
        self.report = report
    }

    public var html: String {
        let comparison = report.comparison
        var body = "<header><h1>courier load compare</h1>"
        for (role, name, style, result) in [("base", report.baseName, "s1", report.base), ("new", report.newName, "s4", report.new)] {
            body += "<p class=\"target\"><span class=\"key \(style)\"></span>\(role) \(HTML.escape(name)): \(HTML.escape(result.target))"
                + " <span class=\"muted\">· \(Format.count(result.requests)) requests in \(Format.seconds(result.durationSeconds))</span></p>"
        }
        body += "</header>" + table(comparison)
        let nines = min(LoadHTMLReport.nines(for: report.base.latency.count), LoadHTMLReport.nines(for: report.new.latency.count))
        let curves = SVGChart(series: [LoadHTMLReport.percentileSeries(report.base.latency, nines: nines, name: report.baseName, style: "s1"),
                                       LoadHTMLReport.percentileSeries(report.new.latency, nines: nines, name: report.newName, style: "s4")],
                              xAxis: .percentiles(nines: nines), yUnit: "ms", label: "Latency by percentile of both runs, log scale of nines")
        body += section("Latency by percentile", curves)
        let length = max(report.base.durationSeconds, report.new.durationSeconds, 1)
        body += section("Requests per second over time", SVGChart(
            series: [overTime(report.base, report.baseName, "s1") { Double($0.requests) / $1 },
                     overTime(report.new, report.newName, "s4") { Double($0.requests) / $1 }],
            xAxis: .seconds(0...length), yUnit: "/s", label: "Requests per second of both runs, each from its start"))
        body += section("p99 over time", SVGChart(
            series: [overTime(report.base, report.baseName, "s1") { interval, _ in Double(interval.latency.value(atPercentile: 99)) / 1000 },
                     overTime(report.new, report.newName, "s4") { interval, _ in Double(interval.latency.value(atPercentile: 99)) / 1000 }],
            xAxis: .seconds(0...length), yUnit: "ms", label: "p99 latency per interval of both runs, each from its start"))
        body += "<footer>Written by <code>courier load compare</code> · intervals from a bootstrap over each run's seconds, "
            + "\(Format.count(comparison.settings.replicates)) replicates, seed \(comparison.settings.seed)</footer>"
        return HTML.page(title: "courier load compare · \(report.baseName) → \(report.newName)", style: LoadHTMLReport.style, body: body)
    }

    private func table(_ comparison: LoadComparison) -> String {
        let confidence = Format.percentNumber(comparison.settings.confidence)
        let rows = comparison.rows.map { row in
            let word = row.word
            let style = switch row.verdict { case .better: "pass"; case .worse: "fail"; case .unchanged: "muted" }
            return "<tr><td>\(HTML.escape(row.metric.name))</td><td>\(LoadComparisonReport.value(row.metric, row.base))</td>"
                + "<td>\(LoadComparisonReport.value(row.metric, row.new))</td><td>\(LoadComparisonReport.change(row.metric, row.change))</td>"
                + "<td>[\(LoadComparisonReport.change(row.metric, row.low)), \(LoadComparisonReport.change(row.metric, row.high))]</td>"
                + "<td class=\"\(style)\">\(HTML.escape(word))</td></tr>"
        }.joined()
        let verdict = comparison.regressed
            ? "<p class=\"fail\">Worse: \(HTML.escape(comparison.rows.filter { $0.verdict == .worse }.map(\.metric.name).joined(separator: ", ")))</p>"
            : "<p class=\"pass\">No figure got significantly worse.</p>"
        return "<section><h2>Changes</h2><table><thead><tr><th>figure</th><th>base</th><th>new</th>"
            + "<th>change</th><th>\(confidence)% interval</th><th></th></tr></thead><tbody>\(rows)</tbody></table>\(verdict)</section>"
    }

    /// One value per interval of a run's timeline, at the interval's middle.
    private func overTime(_ result: LoadResult, _ name: String, _ style: String,
                          _ value: (LoadTimeline.Interval, Double) -> Double) -> SVGChart.Series {
        guard let timeline = result.timeline else { return .init(name: name, style: style, points: []) }
        return .init(name: name, style: style, points: timeline.intervals.enumerated().compactMap { index, interval in
            guard interval.requests > 0 else { return nil }
            let span = LoadHTMLReport.span(of: index, in: timeline, durationSeconds: result.durationSeconds)
            return (span.middle, value(interval, span.length))
        })
    }

    private func section(_ title: String, _ chart: SVGChart) -> String {
        "<section><h2>\(HTML.escape(title))</h2>\(chart.legend)\(chart.svg)</section>"
    }
}
