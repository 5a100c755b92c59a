@testable import CourierLoad
import CourierTestSupport
import Testing

@Suite struct ThresholdTests {
    @Test(arguments: [
        ("p99<200ms", Threshold.Metric.percentile(99), Threshold.Comparison.less, 200_000.0),
        ("p(99.9) <= 1.5s", .percentile(99.9), .lessOrEqual, 1_500_000),
        ("p50<900us", .percentile(50), .less, 900),
        ("p50<900µs", .percentile(50), .less, 900),
        ("median<20", .percentile(50), .less, 20_000),
        ("mean<5ms", .mean, .less, 5_000),
        ("stdev<2ms", .standardDeviation, .less, 2_000),
        ("max<=1s", .max, .lessOrEqual, 1_000_000),
        ("errors<0.1%", .errorRate, .less, 0.001),
        ("errors<=3", .errorCount, .lessOrEqual, 3),
        ("rps>=5000", .requestsPerSecond, .greaterOrEqual, 5_000),
        ("requests>100", .requests, .greater, 100),
    ])
    func parses(expression: String, metric: Threshold.Metric, comparison: Threshold.Comparison, limit: Double) throws {
        let threshold = try Threshold(expression)
        #expect(threshold.metric == metric)
        #expect(threshold.comparison == comparison)
        #expect(abs(threshold.limit - limit) < 1e-9)
        #expect(threshold.endpoint == nil)
    }

    @Test func anEndpointNameScopesIt() throws {
        let threshold = try Threshold("create:p99<50ms")
        #expect(threshold.endpoint == "create")
        #expect(threshold.metric == .percentile(99))
    }

    /// `stage=N:` judges what the timeline measured within stage N of the ramp.
    @Test func aStageScopesIt() throws {
        var result = LoadResult(target: "http://x/", model: .open, concurrency: 8, durationSeconds: 4)
        result.ramp = LoadRamp(.rate, stages: [try LoadStage(duration: .seconds(2), target: 10), try LoadStage(duration: .seconds(2), target: 10)])
        var timeline = LoadTimeline(startedAt: 0)
        // Stage 1 (seconds 0 and 1): 20 fast requests; stage 2 (2 and 3): 20 requests at 100 ms, 2 failed.
        for index in 0..<40 {
            let second = Double(index / 10) + 0.5
            timeline.record(atSecond: second, failed: index == 25 || index == 35, microseconds: second < 2 ? 1_000 : 100_000)
        }
        result.timeline = timeline
        #expect(try Threshold("stage=1:p99<5ms").evaluate(result).passed)
        #expect(try !Threshold("stage=2:p99<5ms").evaluate(result).passed)
        #expect(try Threshold("stage=2:p50<=101ms").evaluate(result).passed)
        #expect(try Threshold("stage=2:errors<=2").evaluate(result).passed)
        #expect(try Threshold("stage=2:rps>=10").evaluate(result).passed)
        #expect(try Threshold("stage=1:errors<=0%").evaluate(result).passed)
        let missing = try Threshold("stage=3:p99<5ms").evaluate(result)
        #expect(!missing.passed && missing.display == "no stage 3 in the result")
        #expect(try Threshold("stage=2:p99<5ms").stage == 2)
        #expect(throws: LoadError.self) { try Threshold("stage=0:p99<5ms") }
        #expect(throws: LoadError.self) { try Threshold("stage=two:p99<5ms") }
    }

    @Test(arguments: ["p99", "p99<", "p99<fast", "p0<1ms", "p101<1ms", "q99<1ms", "errors<-1%", "rps>lots", ":p99<1ms", "latency<1ms"])
    func rejectsWithAReason(expression: String) {
        #expect(throws: LoadError.self) { try Threshold(expression) }
    }

    /// 1,000 requests of 1…1000 ms, 10 of which failed, over 2 s.
    func sample() -> LoadResult {
        var result = LoadResult(target: "http://x/", model: .closed, concurrency: 8, durationSeconds: 2)
        for millisecond in 1...1000 { result.latency.record(microseconds: UInt64(millisecond) * 1000) }
        result.requests = 1000
        result.errors = 10
        result.statusCodes = [200: 990, 503: 10]
        return result
    }

    @Test func judgesAResult() throws {
        let result = sample()
        func judge(_ expression: String) throws -> Bool { try Threshold(expression).evaluate(result).passed }
        #expect(try judge("p50<=501ms"))
        #expect(try !judge("p50<490ms"))
        #expect(try judge("p99<1s"))
        #expect(try !judge("p99.9<990ms"))
        #expect(try judge("errors<=1%"))
        #expect(try !judge("errors<1%"))
        #expect(try judge("errors<11"))
        #expect(try judge("rps>=500"))
        #expect(try !judge("rps>500"))
        #expect(try judge("requests>=1000"))
        #expect(try !judge("max<1s"))
        #expect(try judge("dropped<1"))
        var behind = result
        behind.dropped = 25
        #expect(try !Threshold("dropped<1").evaluate(behind).passed)
        #expect(try Threshold("dropped<=25").evaluate(behind).display == "25")
        #expect(throws: LoadError.self) { try Threshold("dropped<-1") }
    }

    @Test func showsWhatWasMeasured() throws {
        let outcome = try Threshold("errors<0.5%").evaluate(sample())
        #expect(!outcome.passed)
        #expect(outcome.actual == 0.01)
        #expect(outcome.display == "1.00%")
    }

    @Test func aMissingEndpointFails() throws {
        let outcome = try Threshold("nope:p99<1s").evaluate(sample())
        #expect(!outcome.passed)
        #expect(outcome.actual == nil)
    }
}
