import Courier
import CourierLoad
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `courier load compare` on real runs against the test server: latency is real time, so this is
/// in the timed set (Makefile `TIMED_TESTS`), alone after the parallel suite.
@Suite struct LoadCompareTimingTests {
    /// Two runs of the same route show no significant change; the route slowed by 20% is slower
    /// at p50 and p99. The three run side by side, so the machine's moods touch each alike.
    @Test func theSameServerIsUnchangedAndOneSlowedByAFifthIsSlower() async throws {
        try await withTestServer { server in
            func run(_ milliseconds: Int) async throws -> LoadResult {
                var options = LoadOptions()
                options.url = server.url("/delay/\(milliseconds)")
                options.concurrency = 40
                options.warmup = .seconds(1) // the first second opens 40 connections at once
                options.duration = .seconds(10)
                return try await LoadRunner(options: options).run()
            }
            async let first = run(200)
            async let second = run(200)
            async let slowed = run(240)
            let (base, same, slow) = try await (first, second, slowed)
            for result in [base, same, slow] { #expect(result.errors == 0 && result.requests > 1_500) }

            let unchanged = try LoadComparison(base: base, new: same)
            let text = LoadComparisonReport(unchanged, base: base, new: same).text
            for row in unchanged.rows { #expect(row.verdict == .unchanged, "\(row.metric.name)\n\(text)") }

            let slower = try LoadComparison(base: base, new: slow)
            let slowerText = LoadComparisonReport(slower, base: base, new: slow).text
            for metric in [LoadComparison.Metric.percentile(50), .percentile(99)] {
                let row = try #require(slower.rows.first { $0.metric == metric }, "\(metric.name) not compared\n\(slowerText)")
                #expect(row.verdict == .worse, "\(metric.name)\n\(slowerText)")
                #expect(row.word == "slower")
            }
            #expect(slower.regressed)
        }
    }
}
