import Courier
@testable import CourierCommands
import CourierLoad
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `--metrics-port`: live Prometheus metrics scraped over HTTP during a run against the test
/// server, and the last scrape checked against the result, figure by figure.
@Suite struct LoadMetricsTests {
    /// One sample of the text exposition: `name{a="x",b="y"} value`.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Parses Prometheus's text format (what the endpoint serves), failing on any line it cannot read.
    static func parse(_ text: String) throws -> [Sample] {
        try text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let match = try #require(line.wholeMatch(of: /([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/), "unreadable line: \(line)")
            var labels: [String: String] = [:]
            if let body = match.2 {
                for pair in body.matches(of: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/) { labels[String(pair.1)] = unescape(pair.2) }
            }
            return Sample(name: String(match.1), labels: labels, value: try #require(Double(match.3), "value of \(line)"))
        }
    }

    /// A label value as written: `\\`, `\"` and `\n` are escapes.
    static func unescape(_ escaped: Substring) -> String {
        var out = "", escaping = false
        for character in escaped {
            if escaping {
                out.append(character == "n" ? "\n" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return out
    }

    static func scrape(_ url: String, with service: ServiceActor) async throws -> [Sample] {
        let response = try await service.send(HTTPRequest(url: URL(string: url)!))
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        return try parse(String(decoding: response.body, as: UTF8.self))
    }

    static func sum(_ samples: [Sample], _ name: String, where match: [String: String] = [:]) -> Double {
        samples.filter { sample in sample.name == name && match.allSatisfy { sample.labels[$0.key] == $0.value } }.reduce(0) { $0 + $1.value }
    }

    @Test func aScrapeDuringTheRunShowsItAndTheLastOneAgreesWithTheResult() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = Scenario(requests: [
                .init(name: "ok", url: server.url("/sometimes-wrong/metrics-\(UUID().uuidString)?every=4").absoluteString, weight: 3),
                .init(name: "unavailable", url: server.url("/status/503").absoluteString, weight: 1),
                .init(name: "refused", url: "http://127.0.0.1:\(unusedPort())/", weight: 1),
            ])
            options.checks = [try LoadCheck("status==200"), try LoadCheck(#"body~"true""#)]
            options.concurrency = 8
            options.warmup = .milliseconds(500) // not counted, in the result or in the metrics
            options.duration = .seconds(4)
            let metrics = LoadMetrics()
            let endpoint = try await MetricsEndpoint.start(metrics, host: "127.0.0.1", port: 0)
            let runner = try LoadRunner(options: options, metrics: metrics)
            try await withCheckedService { service in
                async let run = runner.run()
                // Scraped as Prometheus would, until the measured phase shows (a loaded machine
                // may take a while to start it): the first scrape with requests and targets in it.
                var during: [Sample] = []
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    during = try await Self.scrape(endpoint.url, with: service)
                    if Self.sum(during, "courier_load_requests_total") > 0 && Self.sum(during, "courier_load_target_in_flight") == 8 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let result = try await run
                let after = try await Self.scrape(endpoint.url, with: service)
                await endpoint.stop()

                // During: requests counted, but not all of them yet; the run's shape in the gauges.
                let midway = Self.sum(during, "courier_load_requests_total")
                #expect(midway > 0 && Int(midway) < result.requests, "\(midway) of \(result.requests)")
                let inFlight = Self.sum(during, "courier_load_in_flight")
                #expect(inFlight >= 1 && inFlight <= 8)
                #expect(Self.sum(during, "courier_load_target_in_flight") == 8)

                // After: every figure equals the result's.
                #expect(Int(Self.sum(after, "courier_load_requests_total")) == result.requests)
                for (code, count) in result.statusCodes {
                    #expect(Int(Self.sum(after, "courier_load_requests_total", where: ["status": String(code)])) == count, "status \(code)")
                }
                for (kind, count) in result.errorKinds {
                    #expect(Int(Self.sum(after, "courier_load_requests_total", where: ["status": kind])) == count, "failure \(kind)")
                }
                #expect(result.errorKinds["connectionFailed"] ?? 0 > 0)
                for (step, endpointResult) in result.endpoints {
                    #expect(Int(Self.sum(after, "courier_load_requests_total", where: ["step": step])) == endpointResult.requests, "\(step)")
                    #expect(Int(Self.sum(after, "courier_load_errors_total", where: ["step": step])) == endpointResult.errors, "\(step)")
                    #expect(Int(Self.sum(after, "courier_load_request_duration_seconds_count", where: ["step": step])) == endpointResult.requests)
                    let everything = Self.sum(after, "courier_load_request_duration_seconds_bucket", where: ["step": step, "le": "+Inf"])
                    #expect(Int(everything) == endpointResult.requests)
                }
                #expect(Int(Self.sum(after, "courier_load_errors_total")) == result.errors)
                #expect(Int64(Self.sum(after, "courier_load_bytes_received_total")) == result.bytesReceived)
                #expect(Int64(Self.sum(after, "courier_load_bytes_sent_total")) == result.bytesSent)
                // The latency sum agrees with the result's mean to the microsecond rounding.
                let seconds = Self.sum(after, "courier_load_request_duration_seconds_sum")
                #expect(abs(seconds - result.latency.mean * Double(result.requests) / 1e6) < 0.01 * seconds)
                for check in result.checks {
                    #expect(Int(Self.sum(after, "courier_load_checks_total", where: ["check": check.expression, "outcome": "pass"])) == check.passes)
                    #expect(Int(Self.sum(after, "courier_load_checks_total", where: ["check": check.expression, "outcome": "fail"])) == check.fails)
                }
                #expect(result.checks.allSatisfy { $0.fails > 0 && $0.passes > 0 })
                #expect(Self.sum(after, "courier_load_in_flight") == 0)
            }
        }
    }

    /// Flow steps not sent (a value was missing) and request bodies sent are live too, and end
    /// equal to the result's `skipped`, per step, and `bytesSent` (before: neither was a metric).
    @Test func skippedStepsAndBytesSentEndEqualToTheResult() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = LoadFlowTests.crud(server, extract: "json:$.nothing")
            options.concurrency = 4
            options.requests = 40
            let metrics = LoadMetrics()
            let before = try Self.parse(metrics.exposition())
            let result = try await LoadRunner(options: options, metrics: metrics).run()
            let after = try Self.parse(metrics.exposition())
            #expect(result.skipped == 80 && result.bytesSent > 0)
            #expect(Int(Self.sum(after, "courier_load_skipped_total")) == result.skipped)
            for (step, endpoint) in result.endpoints {
                #expect(Int(Self.sum(after, "courier_load_skipped_total", where: ["step": step])) == endpoint.skipped, "\(step)")
            }
            #expect(Int(Self.sum(after, "courier_load_skipped_total", where: ["step": "notes/read"])) == 40)
            #expect(Int64(Self.sum(after, "courier_load_bytes_sent_total")) == result.bytesSent)
            // Nothing dropped in a closed run: the counter is there from the start, at zero.
            #expect(before.contains { $0.name == "courier_load_dropped_total" && $0.value == 0 })
            #expect(after.contains { $0.name == "courier_load_dropped_total" && $0.value == 0 })
        }
    }

    /// The open model's scheduled rate is a gauge while it runs.
    @Test func theOpenModelsTargetRateIsLive() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/json/64")
            options.rate = 150
            options.concurrency = 16
            options.duration = .seconds(4)
            let metrics = LoadMetrics()
            async let run = LoadRunner(options: options, metrics: metrics).run()
            // The gauge is published four times a second while the run goes: looked at until it shows.
            var target = 0.0
            let deadline = ContinuousClock.now + .seconds(60)
            while target == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                target = Self.sum(try Self.parse(metrics.exposition()), "courier_load_target_rate")
            }
            #expect(target == 150)
            let result = try await run
            let after = try Self.parse(metrics.exposition())
            #expect(Int(Self.sum(after, "courier_load_requests_total", where: ["status": "200"])) == result.requests)
            #expect(Self.sum(after, "courier_load_target_rate") == 0)
        }
    }

    @Test func aBadOrTakenPortIsAClearError() async throws {
        #expect(throws: (any Error).self) { try LoadRunCommand.parse(["http://x/", "--metrics-port", "70000"]) }
        #expect(throws: (any Error).self) { try LoadRunCommand.parse(["http://x/", "--metrics-port", "9464", "--metrics-linger", "soon"]) }
        let first = try await MetricsEndpoint.start(LoadMetrics(), host: "127.0.0.1", port: 0)
        let port = try #require(Int(first.url.split(separator: ":").last!.split(separator: "/").first!))
        await #expect(throws: MetricsEndpointError.self) { try await MetricsEndpoint.start(LoadMetrics(), host: "127.0.0.1", port: port) }
        await first.stop()
    }
}
