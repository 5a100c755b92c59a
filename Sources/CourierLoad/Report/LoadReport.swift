/// A result as text, laid out like wrk's summary:
///
/// ```text
/// courier load @ http://127.0.0.1:8080/bytes/1024
///   64 in flight (closed model), 10.00s, 1 run
///
///   Latency       mean      stdev        max
///               1.82ms     0.40ms    12.31ms
///   Latency distribution
///      50%      1.75ms
///      ⋮
///   Status codes  200: 345,678
///   345,678 requests in 10.00s, 337.58MB read, 0B sent
/// Requests/sec:  34567.80
/// Transfer/sec:  33.76MB
/// ```
public struct LoadReport: Sendable {
    public let result: LoadResult

    public init(_ result: LoadResult) {
        self.result = result
    }

    public var text: String {
        var lines: [String] = []
        let runs = result.runs == 1 ? "1 run" : "\(result.runs) runs merged"
        var model = switch result.model {
        case .open: "open model at \(Format.rate(result.rate ?? 0)) requests/s, at most \(Format.count(result.concurrency)) in flight"
        case .closed: "\(Format.count(result.concurrency)) in flight (closed model)"
        case .mixed: "closed and open runs: \(Format.count(result.concurrency)) in flight at most, \(Format.rate(result.rate ?? 0)) requests/s scheduled"
        }
        if let ramp = result.ramp, let words = result.rampDescription {
            model = ramp.kind == .rate ? "open model \(words), at most \(Format.count(result.concurrency)) in flight" : "closed model \(words)"
        }
        lines.append("courier load @ \(result.target)")
        lines.append("  \(model), \(Format.seconds(result.durationSeconds)), \(runs)")
        lines.append("")
        lines += latencyLines(result.latency)
        if !result.endpoints.isEmpty { lines += endpointLines() }
        if result.ramp != nil { lines += stageLines() }
        let codes = result.statusCodes.sorted { $0.key < $1.key }.map { "\($0.key): \(Format.count($0.value))" }
        lines.append("  Status codes  " + (codes.isEmpty ? "none" : codes.joined(separator: ", ")))
        let kinds = result.errorKinds.sorted { $0.key < $1.key }.map { "\($0.key): \(Format.count($0.value))" }
        lines.append("  Errors        " + (result.errors == 0 ? "none" : "\(Format.count(result.errors)) (\(Format.percent(result.errorRate)))"
            + (kinds.isEmpty ? "" : " — " + kinds.joined(separator: ", "))))
        if result.skipped > 0 {
            lines.append("  Not sent      \(Format.count(result.skipped)) flow steps (an earlier step gave no value they need)")
        }
        if result.dropped > 0 {
            lines.append("  Not sent      \(Format.count(result.dropped)) scheduled requests (the run fell more than its timeout behind the rate)")
        }
        lines.append("  \(Format.count(result.requests)) requests in \(Format.seconds(result.durationSeconds)), "
            + "\(Format.bytes(Double(result.bytesReceived))) read, \(Format.bytes(Double(result.bytesSent))) sent")
        lines.append("Requests/sec:  \(Format.rate(result.requestsPerSecond))")
        let transfer = result.durationSeconds > 0 ? Double(result.bytesReceived) / result.durationSeconds : 0
        lines.append("Transfer/sec:  \(Format.bytes(transfer))")
        if !result.checks.isEmpty {
            lines.append("  Checks        \(Format.percent(result.checkPassRate)) passed")
            for check in result.checks {
                lines.append("    \(check.fails == 0 ? "pass" : "FAIL")  \(pad(Format.percent(check.passRate), 7))  \(check.expression)"
                    + "  (\(Format.count(check.passes)) of \(Format.count(check.passes + check.fails)))")
            }
        }
        if !result.thresholds.isEmpty {
            lines.append("Thresholds")
            for outcome in result.thresholds {
                lines.append("  \(outcome.passed ? "pass" : "FAIL")  \(outcome.expression)  (measured \(outcome.display))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A line per stage: its span and target, and what the timeline measured in it.
    private func stageLines() -> [String] {
        guard let ramp = result.ramp else { return [] }
        var lines = ["  Stages", "    " + ["stage", "span", "target", "requests", "req/s", "p50", "p99"].map { pad($0, 11) }.joined()]
        for (index, span) in result.stageBoundaries.enumerated() {
            var cells = [String(index + 1), "\(Format.number(span.start))-\(Format.number(span.end))s",
                         Format.number(ramp.stages[index].target) + (ramp.kind == .rate ? "/s" : "")]
            if let figures = result.stageFigures(index + 1) {
                cells += [Format.count(figures.requests), Format.rate(figures.requestsPerSecond),
                          Format.latency(Double(figures.latency.value(atPercentile: 50))),
                          Format.latency(Double(figures.latency.value(atPercentile: 99)))]
            }
            lines.append("    " + cells.map { pad($0, 11) }.joined())
        }
        return lines
    }

    private func latencyLines(_ latency: LatencyDistribution) -> [String] {
        var lines = [
            "  Latency     " + [("mean", latency.mean), ("stdev", latency.standardDeviation), ("max", Double(latency.max))]
                .map { pad($0.0, 11) }.joined(),
            "              " + [latency.mean, latency.standardDeviation, Double(latency.max)]
                .map { pad(Format.latency($0), 11) }.joined(),
            "  Latency distribution",
        ]
        for percentile in LatencyDistribution.reportedPercentiles {
            let label = LatencyDistribution.label(percentile) + "%"
            lines.append("    " + pad(label, 7) + pad(Format.latency(Double(latency.value(atPercentile: percentile))), 12))
        }
        return lines
    }

    private func endpointLines() -> [String] {
        var lines = ["  Endpoints"]
        let width = max(8, result.endpoints.keys.map(\.count).max() ?? 0)
        lines.append("    " + "name".padding(toLength: width, withPad: " ", startingAt: 0)
            + ["requests", "errors", "p50", "p99", "max"].map { pad($0, 11) }.joined())
        for (name, endpoint) in result.endpoints.sorted(by: { $0.key < $1.key }) {
            let cells = [Format.count(endpoint.requests), Format.count(endpoint.errors),
                         Format.latency(Double(endpoint.latency.value(atPercentile: 50))),
                         Format.latency(Double(endpoint.latency.value(atPercentile: 99))),
                         Format.latency(Double(endpoint.latency.max))]
            lines.append("    " + name.padding(toLength: width, withPad: " ", startingAt: 0) + cells.map { pad($0, 11) }.joined())
        }
        return lines
    }

    /// Right-aligns `text` in `width` columns.
    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }

    /// One line for a live view: `[ 3.2s / 10s ]  34,512 requests/s  345,120 requests  0 errors`.
    public static func progressLine(_ progress: LoadProgress) -> String {
        var position = Format.seconds(progress.elapsedSeconds)
        if let total = progress.totalSeconds { position += " / " + Format.seconds(total) }
        if let total = progress.totalRequests { position = "\(Format.count(progress.requests)) / \(Format.count(total))" }
        let phase = progress.warmingUp ? "warming up  " : ""
        return "[ \(position) ]  \(phase)\(Format.count(Int(saturating: progress.currentRate))) requests/s  "
            + "\(Format.count(progress.requests)) requests  \(Format.count(progress.errors)) errors"
    }
}
