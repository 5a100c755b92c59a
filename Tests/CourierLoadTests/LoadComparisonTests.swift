import ArgumentParser
@testable import CourierCommands
@testable import CourierLoad
import Foundation
import Testing

/// `courier load compare` on results built second by second, so each verdict is known in advance.
@Suite struct LoadComparisonTests {
    /// A run of `seconds` full seconds at `perSecond` requests, latencies spread ±10 % around
    /// `milliseconds` (seeded), `errorEvery`-th request failing.
    static func run(milliseconds: Double, seconds: Int = 10, perSecond: Int = 1000, errorEvery: Int = 0,
                    seed: UInt64 = 7, target: String = "http://api/") -> LoadResult {
        var generator = SeededGenerator(seed: seed)
        var timeline = LoadTimeline(startedAt: 1_790_000_000)
        var latency = LatencyDistribution()
        var errors = 0
        for second in 0..<seconds {
            for index in 0..<perSecond {
                let microseconds = UInt64(milliseconds * 1000 * Double.random(in: 0.9...1.1, using: &generator))
                let failed = errorEvery > 0 && (second * perSecond + index) % errorEvery == 0
                if failed { errors += 1 }
                timeline.record(atSecond: Double(second) + 0.5, failed: failed, microseconds: microseconds)
                latency.record(microseconds: microseconds)
            }
        }
        return LoadResult(target: target, model: .closed, concurrency: 8, durationSeconds: Double(seconds),
                          requests: seconds * perSecond, errors: errors, latency: latency, timeline: timeline)
    }

    @Test func twoRunsOfTheSameDistributionShowNoChange() throws {
        let comparison = try LoadComparison(base: Self.run(milliseconds: 20, seed: 1), new: Self.run(milliseconds: 20, seed: 2))
        #expect(comparison.rows.map(\.metric.name) == ["p50", "p90", "p99", "p99.9", "mean", "requests/s", "errors"])
        for row in comparison.rows {
            #expect(row.verdict == .unchanged, "\(row.metric.name): \(row.change)")
            #expect(abs(row.change) < 0.02, "\(row.metric.name): \(row.change)")
            #expect(row.low <= row.change + 0.01 && row.change - 0.01 <= row.high, "\(row.metric.name)")
        }
        #expect(!comparison.regressed)
    }

    @Test func twentyPercentSlowerIsSlowerAtEveryPercentileAndFasterTheOtherWay() throws {
        let base = Self.run(milliseconds: 20), slow = Self.run(milliseconds: 24, seed: 9)
        let comparison = try LoadComparison(base: base, new: slow)
        for row in comparison.rows where row.metric != .requestsPerSecond && row.metric != .errorRate {
            #expect(row.verdict == .worse, "\(row.metric.name)")
            #expect(abs(row.change - 0.2) < 0.03, "\(row.metric.name): \(row.change)")
            #expect(row.low > 0.15 && row.high < 0.25, "\(row.metric.name): [\(row.low), \(row.high)]")
        }
        #expect(comparison.regressed)
        let reverse = try LoadComparison(base: slow, new: base)
        #expect(reverse.rows.filter { $0.verdict == .better }.count == 5)
        #expect(!reverse.regressed)
        #expect(LoadComparisonReport(reverse, base: slow, new: base).text.contains("No figure got significantly worse."))
    }

    /// Fewer requests per second is worse; more errors is worse, judged by points, not ratio.
    @Test func throughputAndErrorsAreJudgedTheirOwnWay() throws {
        let comparison = try LoadComparison(base: Self.run(milliseconds: 20, perSecond: 1000),
                                            new: Self.run(milliseconds: 20, perSecond: 800, errorEvery: 20))
        let rate = try #require(comparison.rows.first { $0.metric == .requestsPerSecond })
        #expect(abs(rate.change + 0.2) < 1e-9)
        #expect(rate.verdict == .worse)
        let errors = try #require(comparison.rows.first { $0.metric == .errorRate })
        #expect(abs(errors.change - 0.05) < 1e-9)
        #expect(errors.verdict == .worse)
        let text = LoadComparisonReport(comparison, base: Self.run(milliseconds: 20), new: Self.run(milliseconds: 20)).text
        #expect(text.contains("lower") && text.contains("more") && text.contains("+5.00pt"))
    }

    /// A change inside the tolerance is `~` however sure the interval; with no tolerance, it counts.
    @Test func theToleranceDecidesWhatASmallSureChangeIs() throws {
        let base = Self.run(milliseconds: 20), new = Self.run(milliseconds: 20.6, seed: 9)
        let lenient = try LoadComparison(base: base, new: new)
        #expect(lenient.rows.first { $0.metric == .percentile(50) }?.verdict == .unchanged)
        let strict = try LoadComparison(base: base, new: new, settings: .init(tolerance: 0))
        let median = try #require(strict.rows.first { $0.metric == .percentile(50) })
        #expect(median.low > 0, "a 3% shift over 10,000 requests a run is sure: [\(median.low), \(median.high)]")
        #expect(median.verdict == .worse)
    }

    @Test func theSameSeedGivesTheSameIntervalsAndAnotherSeedOthers() throws {
        let base = Self.run(milliseconds: 20, seed: 3), new = Self.run(milliseconds: 21, seed: 4)
        let first = try LoadComparison(base: base, new: new, settings: .init(seed: 11))
        #expect(try LoadComparison(base: base, new: new, settings: .init(seed: 11)) == first)
        #expect(try LoadComparison(base: base, new: new, settings: .init(seed: 12)).rows.map(\.low) != first.rows.map(\.low))
    }

    /// Percentiles with fewer than 10 requests beyond them in a run are left out, and said so.
    @Test func aThinTailIsNotCompared() throws {
        let comparison = try LoadComparison(base: Self.run(milliseconds: 20, perSecond: 300), new: Self.run(milliseconds: 20, perSecond: 300))
        #expect(comparison.omitted == [99.9])
        #expect(!comparison.rows.contains { $0.metric == .percentile(99.9) })
        #expect(LoadComparisonReport(comparison, base: Self.run(milliseconds: 20), new: Self.run(milliseconds: 20)).text
            .contains("Not compared: p99.9"))
    }

    @Test func resultsThatCannotBeComparedAreNamed() throws {
        var noTimeline = Self.run(milliseconds: 20)
        noTimeline.timeline = nil
        #expect(throws: LoadError.self) { try LoadComparison(base: noTimeline, new: Self.run(milliseconds: 20), names: ("old.json", "new.json")) }
        do {
            _ = try LoadComparison(base: Self.run(milliseconds: 20), new: Self.run(milliseconds: 20, seconds: 3), names: ("old.json", "new.json"))
            Issue.record("a three-second run was compared")
        } catch let error as LoadError {
            #expect(error.message.contains("new.json has 3 intervals with requests"))
        }
        for settings in [LoadComparison.Settings(confidence: 1.5), .init(tolerance: -0.1), .init(replicates: 5)] {
            #expect(throws: LoadError.self) { try LoadComparison(base: Self.run(milliseconds: 20), new: Self.run(milliseconds: 20), settings: settings) }
        }
    }

    /// The JSON form names figures as the table does, and reads back equal.
    @Test func theJSONFormRoundTrips() throws {
        let comparison = try LoadComparison(base: Self.run(milliseconds: 20), new: Self.run(milliseconds: 24))
        let data = try JSONEncoder().encode(comparison)
        #expect(String(decoding: data, as: UTF8.self).contains(#""metric":"p99.9""#))
        #expect(try JSONDecoder().decode(LoadComparison.self, from: data) == comparison)
        #expect(LoadComparison.Metric(name: "p101") == nil && LoadComparison.Metric(name: "median") == nil)
    }

    @Test func theHTMLPageOverlaysBothRuns() throws {
        let base = Self.run(milliseconds: 20, target: "http://old/"), new = Self.run(milliseconds: 24, target: "http://new/<x>")
        let report = LoadComparisonReport(try LoadComparison(base: base, new: new), base: base, new: new, names: ("main.json", "branch.json"))
        let html = LoadComparisonHTMLReport(report).html
        #expect(html.components(separatedBy: "<svg class=\"chart\"").count - 1 == 3)
        // Each chart draws both runs: one line per run per chart.
        #expect(html.components(separatedBy: "class=\"line s1\"").count - 1 == 3)
        #expect(html.components(separatedBy: "class=\"line s4\"").count - 1 == 3)
        #expect(html.contains("http://new/&lt;x&gt;") && !html.contains("<x>"))
        #expect(html.contains("<td class=\"fail\">slower</td>"))
        #expect(!html.contains("<script"))
    }

    /// The command: 0 without a regression, 99 with one, 64 (a validation error) for bad input.
    @Test func theCommandExitsWith99OnARegression() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = folder.appendingPathComponent("base.json").path, slow = folder.appendingPathComponent("slow.json").path
        let page = folder.appendingPathComponent("compare.html").path
        try Self.run(milliseconds: 20).jsonData().write(to: URL(fileURLWithPath: base))
        try Self.run(milliseconds: 24).jsonData().write(to: URL(fileURLWithPath: slow))

        try await LoadCompareCommand.parse([slow, base]).run()
        do {
            try await LoadCompareCommand.parse([base, slow, "--report", page]).run()
            Issue.record("a 20% slower run passed")
        } catch let code as ExitCode {
            #expect(code.rawValue == 99)
        }
        #expect(FileManager.default.contents(atPath: page).map { String(decoding: $0, as: UTF8.self).contains("slower") } == true)

        #expect(throws: (any Error).self) { try LoadCompareCommand.parse([base, slow, "--confidence", "lots"]) }
        #expect(throws: (any Error).self) { try LoadCompareCommand.parse([base, slow, "--confidence", "100%"]) }
        #expect(try LoadCompareCommand.fraction("99%", "--confidence") == 0.99)
        await #expect(throws: ValidationError.self) { try await LoadCompareCommand.parse([base, folder.appendingPathComponent("missing.json").path]).run() }
    }
}
