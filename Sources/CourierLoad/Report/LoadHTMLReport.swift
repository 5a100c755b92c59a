import Foundation

/// A result as one self-contained HTML page: throughput and errors over time, latency
/// percentiles over time, the HDR percentile curve, status codes, thresholds and the run's
/// settings. Charts are inline SVG coloured by CSS, for a light or a dark page; the page loads
/// nothing from anywhere and runs no script.
///
/// ```swift
/// try LoadHTMLReport(result).html.write(to: URL(fileURLWithPath: "run.html"), atomically: true, encoding: .utf8)
/// ```
public struct LoadHTMLReport: Sendable {
    public let result: LoadResult

    public init(_ result: LoadResult) {
        self.result = result
    }

    public var html: String {
        var body = header + tiles
        if let timeline = result.timeline, !timeline.intervals.isEmpty {
            body += section("Throughput and errors", chart: throughputChart(timeline))
            body += section("Latency over time", chart: latencyOverTimeChart(timeline))
        } else {
            body += "<section><h2>Over time</h2><p class=\"muted\">This result has no timeline (written before Courier recorded one).</p></section>"
        }
        body += section("Latency by percentile", chart: percentileChart)
        body += stageSection + statusSection + checkSection + thresholdSection + endpointSection + settingsSection
        body += "<footer>Written by <code>courier load</code> · \(HTML.escape(LoadResult.schema))</footer>"
        return HTML.page(title: "courier load · \(result.target)", style: Self.style, body: body)
    }

    // MARK: Sections

    private var header: String {
        var model = switch result.model {
        case .open: "open model, \(Format.rate(result.rate ?? 0)) requests/s scheduled, at most \(Format.count(result.concurrency)) in flight"
        case .closed: "closed model, \(Format.count(result.concurrency)) in flight"
        case .mixed: "closed and open runs merged"
        }
        if let ramp = result.ramp, let words = result.rampDescription {
            model = ramp.kind == .rate ? "open model, \(words), at most \(Format.count(result.concurrency)) in flight" : "closed model, \(words)"
        }
        var runs = result.runs == 1 ? "1 run" : "\(result.runs) runs merged"
        if let shard = result.shard { runs = "shard \(shard) of a sharded run" }
        var started = ""
        if let timeline = result.timeline {
            let formatter = ISO8601DateFormatter()
            started = " · started " + formatter.string(from: Date(timeIntervalSince1970: timeline.startedAt.rounded()))
        }
        return "<header><h1>courier load</h1><p class=\"target\">\(HTML.escape(result.target))</p>"
            + "<p class=\"muted\">\(HTML.escape(model)) · \(HTML.escape(runs)) · \(String(format: "%.2f", result.durationSeconds)) s\(started)</p></header>"
    }

    private var tiles: String {
        let latency = result.latency
        var items: [(String, String, Bool)] = [
            ("requests", Format.count(result.requests), false),
            ("requests/s", Format.rate(result.requestsPerSecond), false),
            ("errors", "\(Format.count(result.errors)) (\(Format.percent(result.errorRate)))", result.errors > 0),
            ("p50", Format.latency(Double(latency.value(atPercentile: 50))), false),
            ("p99", Format.latency(Double(latency.value(atPercentile: 99))), false),
            ("max", Format.latency(Double(latency.max)), false),
        ]
        // The open model's scheduled requests not sent (the run fell behind its rate): shown
        // only when there are any, marked as errors are.
        if result.dropped > 0 { items.insert(("not sent (behind the rate)", Format.count(result.dropped), true), at: 3) }
        return "<section class=\"tiles\">" + items.map { name, value, bad in
            "<div class=\"tile\(bad ? " bad" : "")\"><div class=\"value\">\(HTML.escape(value))</div><div class=\"name\">\(name)</div></div>"
        }.joined() + "</section>"
    }

    private func section(_ title: String, chart: SVGChart) -> String {
        "<section><h2>\(HTML.escape(title))</h2>\(chart.legend)\(chart.svg)</section>"
    }

    /// The seconds interval `index` covers: the last one only up to the run's end.
    private func span(of index: Int, in timeline: LoadTimeline) -> (middle: Double, length: Double) {
        Self.span(of: index, in: timeline, durationSeconds: result.durationSeconds)
    }

    static func span(of index: Int, in timeline: LoadTimeline, durationSeconds: Double) -> (middle: Double, length: Double) {
        let width = Double(timeline.intervalSeconds)
        let start = Double(index) * width
        let end = index == timeline.intervals.count - 1 ? max(start + 0.001, min(start + width, durationSeconds)) : start + width
        return ((start + end) / 2, end - start)
    }

    /// Where each stage after the first begins, for the charts over time.
    private var stageMarkers: [(x: Double, label: String)] {
        result.stageBoundaries.enumerated().dropFirst().map { ($1.start, "stage \($0 + 1)") }
    }

    private func axis(_ timeline: LoadTimeline) -> SVGChart.XAxis {
        .seconds(0...max(result.durationSeconds, Double(timeline.intervalSeconds)))
    }

    private func throughputChart(_ timeline: LoadTimeline) -> SVGChart {
        func line(_ name: String, _ style: String, _ count: (LoadTimeline.Interval) -> Int) -> SVGChart.Series {
            .init(name: name, style: style, points: timeline.intervals.indices.map { index in
                let span = span(of: index, in: timeline)
                return (span.middle, Double(count(timeline.intervals[index])) / span.length)
            })
        }
        return SVGChart(series: [line("requests/s", "s1", \.requests), line("errors/s", "s2", \.errors)],
                        xAxis: axis(timeline), yUnit: "/s", label: "Requests and errors per second over the run", markers: stageMarkers)
    }

    private func latencyOverTimeChart(_ timeline: LoadTimeline) -> SVGChart {
        func line(_ name: String, _ style: String, _ value: (LatencyDistribution) -> UInt64) -> SVGChart.Series {
            .init(name: name, style: style, points: timeline.intervals.enumerated().compactMap { index, interval in
                interval.requests > 0 ? (span(of: index, in: timeline).middle, Double(value(interval.latency)) / 1000) : nil
            })
        }
        return SVGChart(series: [
            line("p50", "s1", { $0.value(atPercentile: 50) }),
            line("p90", "s3", { $0.value(atPercentile: 90) }),
            line("p99", "s4", { $0.value(atPercentile: 99) }),
            line("max", "s2", { $0.max }),
        ], xAxis: axis(timeline), yUnit: "ms", label: "Latency percentiles per interval, in milliseconds", markers: stageMarkers)
    }

    /// HdrHistogram's percentile plot: x is `log10(1 / (1 − p))`, so each nine gets equal room.
    private var percentileChart: SVGChart {
        let nines = Self.nines(for: result.latency.count)
        return SVGChart(series: [Self.percentileSeries(result.latency, nines: nines, name: "latency at percentile", style: "s1")],
                        xAxis: .percentiles(nines: nines), yUnit: "ms", label: "Latency by percentile, log scale of nines")
    }

    /// As many nines as `count` requests support: 1,000 requests say little past 99.9 %.
    static func nines(for count: Int) -> Double {
        max(2, min(5, (log10(Double(max(1, count)))).rounded(.down)))
    }

    /// The percentile curve of `latency` in milliseconds, for a chart with `nines` on its x axis.
    static func percentileSeries(_ latency: LatencyDistribution, nines: Double, name: String, style: String) -> SVGChart.Series {
        let points = stride(from: 0.0, through: nines, by: nines / 200).map { x -> (x: Double, y: Double) in
            let percentile = min(100, 100 * (1 - pow(10, -x)))
            return (x, Double(latency.value(atPercentile: percentile)) / 1000)
        }
        return .init(name: name, style: style, points: points)
    }

    private var statusSection: String {
        var rows: [(String, Int, String)] = result.statusCodes.sorted { $0.key < $1.key }.map { code, count in
            (String(code), count, code < 300 ? "s3" : code < 400 ? "s1" : code < 500 ? "s4" : "s2")
        }
        rows += result.errorKinds.sorted { $0.key < $1.key }.map { ($0.key, $0.value, "s2") }
        guard let largest = rows.map(\.1).max(), largest > 0 else {
            return "<section><h2>Status codes</h2><p class=\"muted\">No responses.</p></section>"
        }
        let rowHeight = 26.0
        let height = Double(rows.count) * rowHeight + 8
        var svg = "<svg class=\"bars\" viewBox=\"0 0 960 \(Int(height))\" role=\"img\" aria-label=\"Responses by status code and failures by kind\">"
        for (index, row) in rows.enumerated() {
            let y = 4 + Double(index) * rowHeight
            let length = max(2, 700 * Double(row.1) / Double(largest))
            svg += "<text class=\"label\" x=\"120\" y=\"\(SVGChart.fixed(y + 13))\" text-anchor=\"end\" dominant-baseline=\"middle\">\(HTML.escape(row.0))</text>"
            svg += "<path class=\"bar \(row.2)\" d=\"M130 \(SVGChart.fixed(y + 3))h\(SVGChart.fixed(length))v20h-\(SVGChart.fixed(length))z\"><title>\(HTML.escape(row.0)): \(row.1)</title></path>"
            svg += "<text class=\"label\" x=\"\(SVGChart.fixed(138 + length))\" y=\"\(SVGChart.fixed(y + 13))\" dominant-baseline=\"middle\">\(Format.count(row.1))</text>"
        }
        return "<section><h2>Status codes</h2>\(svg)</svg></section>"
    }

    /// Each stage of a ramp: its span and target, and what the timeline measured within it.
    private var stageSection: String {
        guard let ramp = result.ramp else { return "" }
        let unit = ramp.kind == .rate ? "/s" : " in flight"
        let rows = result.stageBoundaries.enumerated().map { index, span in
            var cells = "<td>\(index + 1)</td><td>\(Format.number(span.start))–\(Format.number(span.end)) s</td><td>\(Format.number(ramp.stages[index].target))\(unit)</td>"
            if let figures = result.stageFigures(index + 1) {
                cells += "<td>\(Format.count(figures.requests))</td><td>\(Format.rate(figures.requestsPerSecond))</td><td>\(Format.count(figures.errors))</td>"
                    + "<td>\(Format.latency(Double(figures.latency.value(atPercentile: 50))))</td><td>\(Format.latency(Double(figures.latency.value(atPercentile: 99))))</td>"
            } else {
                cells += "<td colspan=\"5\" class=\"muted\">no timeline</td>"
            }
            return "<tr>\(cells)</tr>"
        }.joined()
        return "<section><h2>Stages</h2><table><thead><tr><th>stage</th><th>span</th><th>target</th><th>requests</th><th>requests/s</th>"
            + "<th>errors</th><th>p50</th><th>p99</th></tr></thead><tbody>\(rows)</tbody></table>"
            + "<p class=\"muted\">Counted by the second each request ended; latencies to two significant digits. <code>stage=N:</code> scopes a threshold to a stage.</p></section>"
    }

    private var checkSection: String {
        guard !result.checks.isEmpty else { return "" }
        let rows = result.checks.map { check in
            "<tr><td><code>\(HTML.escape(check.expression))</code></td><td>\(Format.count(check.passes))</td><td>\(Format.count(check.fails))</td>"
                + "<td class=\"\(check.fails == 0 ? "pass" : "fail")\">\(Format.percent(check.passRate))</td></tr>"
        }.joined()
        return "<section><h2>Checks</h2><table><thead><tr><th>check</th><th>passed</th><th>failed</th><th>pass rate</th></tr></thead><tbody>\(rows)</tbody></table></section>"
    }

    private var thresholdSection: String {
        guard !result.thresholds.isEmpty else { return "" }
        let rows = result.thresholds.map { outcome in
            "<tr><td><code>\(HTML.escape(outcome.expression))</code></td><td>\(HTML.escape(outcome.display))</td>"
                + "<td class=\"\(outcome.passed ? "pass" : "fail")\">\(outcome.passed ? "pass" : "FAIL")</td></tr>"
        }.joined()
        return "<section><h2>Thresholds</h2><table><thead><tr><th>condition</th><th>measured</th><th>outcome</th></tr></thead><tbody>\(rows)</tbody></table></section>"
    }

    private var endpointSection: String {
        guard !result.endpoints.isEmpty else { return "" }
        let rows = result.endpoints.sorted { $0.key < $1.key }.map { name, endpoint in
            "<tr><td>\(HTML.escape(name))</td><td>\(Format.count(endpoint.requests))</td><td>\(Format.count(endpoint.errors))</td>"
                + "<td>\(Format.latency(Double(endpoint.latency.value(atPercentile: 50))))</td>"
                + "<td>\(Format.latency(Double(endpoint.latency.value(atPercentile: 99))))</td></tr>"
        }.joined()
        return "<section><h2>Requests and flow steps</h2><table><thead><tr><th>request or step</th><th>requests</th><th>errors</th><th>p50</th><th>p99</th></tr></thead><tbody>\(rows)</tbody></table></section>"
    }

    private var settingsSection: String {
        var settings = result.settings
        settings["runs"] = String(result.runs)
        settings["bytes received"] = Format.bytes(Double(result.bytesReceived))
        settings["bytes sent"] = Format.bytes(Double(result.bytesSent))
        let rows = settings.sorted { $0.key < $1.key }.map { "<tr><th>\(HTML.escape($0.key))</th><td>\(HTML.escape($0.value))</td></tr>" }.joined()
        return "<section><h2>Run</h2><table class=\"settings\"><tbody>\(rows)</tbody></table></section>"
    }

    static let style = """
        :root{--bg:#fff;--fg:#1b2029;--muted:#5d6677;--grid:#e4e7ec;--card:#f5f6f8;--s1:#2563d9;--s2:#d4412a;--s3:#15905f;--s4:#8b4fd0}
        @media (prefers-color-scheme:dark){:root{--bg:#13161b;--fg:#e5e8ee;--muted:#98a1b1;--grid:#2a2f38;--card:#1c2028;--s1:#6d9eff;--s2:#ff7b5e;--s3:#4ccf98;--s4:#c296ff}}
        body{margin:0 auto;max-width:1000px;padding:20px 16px;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
        h1{font-size:20px;margin:0}h2{font-size:15px;margin:28px 0 6px}.target{font-family:ui-monospace,monospace;margin:4px 0;word-break:break-all}
        .muted,footer{color:var(--muted)}footer{margin-top:32px;font-size:12px}
        .tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(140px,1fr));gap:10px;margin-top:16px}
        .tile{background:var(--card);border-radius:8px;padding:10px 12px}.tile .value{font-size:20px;font-weight:600}.tile .name{color:var(--muted);font-size:12px}
        .tile.bad .value{color:var(--s2)}
        svg{width:100%;height:auto;display:block}svg .grid{stroke:var(--grid);stroke-width:1}svg text{fill:var(--muted);font-size:11px}
        svg .line{fill:none;stroke-width:2;stroke-linejoin:round}svg .marker{stroke:var(--muted);stroke-width:1;stroke-dasharray:4 3}svg .label{fill:var(--fg);font-size:12px}
        .line.s1{stroke:var(--s1)}.line.s2{stroke:var(--s2)}.line.s3{stroke:var(--s3)}.line.s4{stroke:var(--s4)}
        .bar.s1{fill:var(--s1)}.bar.s2{fill:var(--s2)}.bar.s3{fill:var(--s3)}.bar.s4{fill:var(--s4)}
        .legend{margin:0 0 4px;color:var(--muted);font-size:12px}.key{display:inline-block;width:14px;height:3px;margin:0 4px 3px 10px;vertical-align:middle}
        .key.s1{background:var(--s1)}.key.s2{background:var(--s2)}.key.s3{background:var(--s3)}.key.s4{background:var(--s4)}
        table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--grid)}
        .settings th{width:30%;color:var(--muted);font-weight:normal}.pass{color:var(--s3);font-weight:600}.fail{color:var(--s2);font-weight:700}
        code{font-family:ui-monospace,monospace}
        """
}
