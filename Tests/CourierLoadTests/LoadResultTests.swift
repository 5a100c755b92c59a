@testable import CourierLoad
import Foundation
import CourierTestSupport
import Testing

@Suite struct LoadResultTests {
    /// Latencies spread over five decades, as real runs have them.
    static func latencies(seed: UInt64, count: Int) -> [UInt64] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let exponent = Double(state >> 11) / Double(1 << 53) * 5 // 1 µs … 100 s
            return UInt64(pow(10, exponent)) + 1
        }
    }

    static func result(_ values: [UInt64], statuses: [Int: Int], target: String = "http://a/") -> LoadResult {
        var result = LoadResult(target: target, model: .closed, concurrency: 32, durationSeconds: 10)
        for value in values { result.latency.record(microseconds: value) }
        result.requests = values.count
        result.statusCodes = statuses
        result.errors = statuses.filter { $0.key >= 400 }.values.reduce(0, +)
        result.errorKinds = ["connectionFailed": 2]
        result.endpoints = ["get": EndpointResult(requests: values.count, errors: 0, latency: result.latency)]
        return result
    }

    @Test func mergingIsExact() throws {
        let first = Self.latencies(seed: 1, count: 40_000)
        let second = Self.latencies(seed: 2, count: 25_000)
        var merged = Self.result(first, statuses: [200: 39_000, 503: 1000])
        merged.merge(Self.result(second, statuses: [200: 25_000], target: "http://b/"))
        let whole = Self.result(first + second, statuses: [200: 64_000, 503: 1000])

        #expect(merged.latency == whole.latency) // bucket by bucket, not percentiles of percentiles
        for percentile in LatencyDistribution.reportedPercentiles {
            #expect(merged.latency.value(atPercentile: percentile) == whole.latency.value(atPercentile: percentile))
        }
        #expect(merged.requests == 65_000)
        #expect(merged.errors == 1000)
        #expect(merged.statusCodes == [200: 64_000, 503: 1000])
        #expect(merged.errorKinds == ["connectionFailed": 4])
        #expect(merged.endpoints["get"]?.latency == whole.latency)
        #expect(merged.concurrency == 64)
        #expect(merged.runs == 2)
        #expect(merged.target == "http://a/, http://b/")
    }

    @Test func mergingClosedAndOpenRunsSaysSo() {
        var closed = Self.result([10], statuses: [200: 1])
        var open = Self.result([20], statuses: [200: 1])
        open.model = .open
        open.rate = 100
        closed.merge(open)
        #expect(closed.model == .mixed)
        #expect(closed.rate == 100)
    }

    @Test func jsonRoundTripsExactly() throws {
        var original = Self.result(Self.latencies(seed: 3, count: 10_000), statuses: [200: 9_990, 429: 10])
        original.thresholds = [try Threshold("p99<1s").evaluate(original)]
        let decoded = try LoadResult.decode(try original.jsonData())
        #expect(decoded == original)
        #expect(try decoded.jsonData() == original.jsonData())
    }

    @Test func aHistogramThatDisagreesWithItsCountIsRejected() throws {
        let result = Self.result([5, 6, 7], statuses: [200: 3])
        var json = try #require(try JSONSerialization.jsonObject(with: result.jsonData()) as? [String: Any])
        var latency = try #require(json["latency"] as? [String: Any])
        latency["count"] = 4
        json["latency"] = latency
        #expect(throws: LoadError.self) { try LoadResult.decode(try JSONSerialization.data(withJSONObject: json)) }
        #expect(throws: LoadError.self) { try LoadResult.decode(Data(#"{"schema":"courier.load/2"}"#.utf8)) }
        #expect(throws: LoadError.self) { try LoadResult.decode(Data("not json".utf8)) }
    }

    @Test(arguments: ["", "HISTFAAAAB", "QUJD", "HISTFAAAA" + String(repeating: "A", count: 60)])
    func corruptHistogramsAreTypedErrors(encoded: String) {
        #expect(throws: LoadError.self) { try HistogramCoding.decode(encoded) }
    }

    /// A V2 histogram, uncompressed, of Courier's layout with `payload` as its counts.
    static func plainHistogram(payload: [UInt8], digits: UInt32 = 3) -> String {
        var plain = [UInt8]()
        func append(_ value: some FixedWidthInteger) { withUnsafeBytes(of: value.bigEndian) { plain += $0 } }
        append(HistogramCoding.encodingCookie)
        append(UInt32(payload.count))
        append(UInt32(0))
        append(digits)
        append(UInt64(1))
        append(LatencyDistribution.highestTrackable)
        append(Double(1).bitPattern)
        return Data(plain + payload).base64EncodedString()
    }

    /// A run of empty buckets as long as Int64.min, whose negation traps, and runs that together
    /// pass Int.max: typed errors.
    @Test func skipsPastTheBucketsAreTypedErrors() throws {
        var payload = [UInt8]()
        ZigZag.append(.min, to: &payload)
        ZigZag.append(1, to: &payload)
        #expect(throws: LoadError.self) { try HistogramCoding.decode(Self.plainHistogram(payload: payload)) }
        var twice = [UInt8]()
        for _ in 0..<3 { ZigZag.append(-(Int64.max / 2), to: &twice) }
        ZigZag.append(0, to: &twice)
        #expect(throws: LoadError.self) { try HistogramCoding.decode(Self.plainHistogram(payload: twice)) }
    }

    /// A result file is what users hand `merge`, `compare` and `--report`: each figure that
    /// would overflow a merge, divide by nothing or trap a conversion is refused when read.
    @Test(arguments: [
        ("durationSeconds", "1e300"), ("durationSeconds", "-1"), ("requests", "-1"), ("requests", "4611686018427387904"),
        ("concurrency", "9223372036854775807"), ("runs", "-5"), ("bytesSent", "-1"), ("rate", "-3"),
    ])
    func resultFiguresPastAnyRunAreTypedErrors(field: String, literal: String) throws {
        var json = try #require(try JSONSerialization.jsonObject(with: Self.result([5, 6], statuses: [200: 2]).jsonData()) as? [String: Any])
        json[field] = try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed)
        #expect(throws: LoadError.self) { try LoadResult.decode(try JSONSerialization.data(withJSONObject: json)) }
    }

    /// Timelines, shards, stages and histograms of a file: the same.
    @Test func resultPartsPastAnyRunAreTypedErrors() throws {
        var result = Self.result([5, 6], statuses: [200: 2])
        var timeline = LoadTimeline(startedAt: 1_700_000_000)
        timeline.record(atSecond: 0.5, failed: false, microseconds: 5)
        timeline.record(atSecond: 1.5, failed: false, microseconds: 6)
        result.timeline = timeline
        result.shard = try LoadShard(index: 0, count: 2)
        result.ramp = LoadRamp(.rate, stages: [try LoadStage(duration: .seconds(10), target: 5)])
        let base = try #require(try JSONSerialization.jsonObject(with: result.jsonData()) as? [String: Any])
        #expect(try LoadResult.decode(try JSONSerialization.data(withJSONObject: base)) == result) // the unchanged file reads

        func rejected(_ change: (inout [String: Any]) -> Void) throws {
            var json = base
            change(&json)
            #expect(throws: LoadError.self) { try LoadResult.decode(try JSONSerialization.data(withJSONObject: json)) }
        }
        func timelineField(_ name: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { json in
                var timeline = json["timeline"] as? [String: Any] ?? [:]
                timeline[name] = value
                json["timeline"] = timeline
            }
        }
        try rejected(timelineField("startedAt", 1e300))
        try rejected(timelineField("intervalSeconds", 0))
        try rejected(timelineField("intervalSeconds", 3))
        try rejected(timelineField("intervalSeconds", Int64.max))
        try rejected(timelineField("intervals", Array(repeating: ["requests": 0, "errors": 0, "hdr": HistogramCoding.encode(LatencyDistribution(significantDigits: .two).histogram)],
                                                          count: LoadTimeline.maximumIntervals + 1)))
        try rejected { $0["shard"] = ["index": 0, "count": 0] }
        try rejected { $0["shard"] = ["index": 3, "count": 2] }
        try rejected { $0["ramp"] = ["kind": "rate", "stages": [["seconds": 0, "target": 5]]] }
        try rejected { $0["ramp"] = ["kind": "rate", "stages": [["seconds": 10, "target": -1]]] }
        // An overall histogram with a timeline's two digits (HdrHistogram's merge traps on a layout it cannot take).
        try rejected { json in
            var latency = json["latency"] as? [String: Any] ?? [:]
            latency["hdr"] = Self.plainHistogram(payload: [], digits: 2)
            latency["count"] = 0
            json["latency"] = latency
        }
    }

    /// `add` of a histogram laid out differently (one built in code) records value by value
    /// instead of trapping in HdrHistogram's merge; counts add up without overflowing.
    @Test func addingAnotherLayoutAndHugeCountsDoesNotTrap() {
        var mine = LatencyDistribution()
        mine.record(microseconds: 100)
        var coarse = LatencyDistribution(significantDigits: .two)
        coarse.record(microseconds: 2_000)
        coarse.record(microseconds: 2_000)
        mine.add(coarse)
        #expect(mine.count == 3)
        #expect(mine.max >= 1_990)
        #expect(Count.sum(Int.max - 1, 5) == Int.max)
        #expect(Count.sum(Int64.min + 1, -5) == Int64.min)
        #expect(Count.sum(2, 3) == 5)
    }

    /// The `hdr` string is the standard compressed V2 encoding: Python's HdrHistogram reads ours,
    /// and we read what it writes.
    @Test func histogramsInteroperateWithPythonsHdrHistogram() async throws {
        let values = Self.latencies(seed: 4, count: 5_000)
        let ours = Self.result(values, statuses: [200: 5_000]).latency
        let script = """
            import json, sys
            from hdrh.histogram import HdrHistogram
            theirs = HdrHistogram.decode(sys.argv[1])
            out = {"count": theirs.get_total_count(), "max": theirs.get_max_value(),
                   "p": {str(p): theirs.get_value_at_percentile(p) for p in (50, 90, 99, 99.9)}}
            mine = HdrHistogram(1, 3600000000, 3)
            for v in json.loads(sys.argv[2]): mine.record_value(v)
            out["encoded"] = mine.encode().decode()
            print(json.dumps(out))
            """
        let valuesJSON = String(decoding: try JSONEncoder().encode(values), as: UTF8.self)
        let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                       ["python3", "-c", script, HistogramCoding.encode(ours.histogram), valuesJSON])
        #expect(run.status == 0, "\(run.error)")
        let answer = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect(answer["count"] as? Int == 5_000)
        #expect(answer["max"] as? UInt64 == ours.max)
        let percentiles = try #require(answer["p"] as? [String: UInt64])
        #expect(percentiles["50"] == ours.value(atPercentile: 50))
        #expect(percentiles["99"] == ours.value(atPercentile: 99))
        #expect(percentiles["99.9"] == ours.value(atPercentile: 99.9))
        let theirs = try HistogramCoding.decode(try #require(answer["encoded"] as? String))
        #expect(LatencyDistribution(histogram: theirs) == ours)
    }

    /// Docs/load-result.schema.json describes what `--json` writes, checked by an independent validator.
    @Test func theJSONMatchesItsPublishedSchema() async throws {
        var result = Self.result(Self.latencies(seed: 5, count: 1_000), statuses: [200: 990, 500: 10])
        result.thresholds = [try Threshold("errors<1%").evaluate(result)]
        result.shard = try LoadShard(index: 2, count: 3)
        var timeline = LoadTimeline(startedAt: 1_790_000_000.25)
        for second in 0..<5 { timeline.record(atSecond: Double(second), failed: second == 3, microseconds: 1500) }
        result.timeline = timeline
        result.settings = ["method": "GET", "shards": "3"]
        result.checks = [CheckResult(expression: "status==200", passes: 990, fails: 10)]
        result.ramp = LoadRamp(.rate, stages: [try LoadStage(duration: .seconds(30), target: 100), try LoadStage(duration: .seconds(2), target: 0)])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-schema-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try result.jsonData().write(to: file)
        let schema = Repository.path("Docs/load-result.schema.json")
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.validate(json.load(open(sys.argv[2])), schema)
            bad = json.load(open(sys.argv[2])); bad["model"] = "sideways"
            try:
                jsonschema.validate(bad, schema); print("accepted a bad model")
            except jsonschema.ValidationError:
                print("ok")
            """
        let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, schema.path, file.path])
        #expect(run.status == 0, "\(run.error)")
        #expect(String(decoding: run.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}
