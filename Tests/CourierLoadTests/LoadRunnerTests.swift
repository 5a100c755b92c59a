import CourierSync
import Courier
import CourierLoad
import CourierTestServer
import Foundation
import Synchronization
import CourierTestSupport
import Testing

/// Load runs through a real service against the in-process test server.
@Suite struct LoadRunnerTests {
    @Test func aClosedRunCountsEveryRequestAndItsBytes() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/json/512")
            options.concurrency = 16
            options.requests = 2_000
            let result = try await LoadRunner(options: options).run()
            #expect(result.requests == 2_000)
            #expect(result.latency.count == 2_000)
            #expect(result.statusCodes == [200: 2_000])
            #expect(result.errors == 0)
            #expect(result.bytesReceived == 2_000 * 512)
            #expect(result.model == .closed)
            #expect(result.latency.min > 0 && result.latency.max >= result.latency.value(atPercentile: 99))
        }
    }

    /// An open run whose rate no machine can send (1e300 a second) ends at its duration plus its
    /// timeout, reporting what it did not send: it used to schedule every request and never end.
    /// The live metrics count them too, when the run ends.
    @Test func anOpenRunThatFallsBehindEndsAndSaysWhatItDidNotSend() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/json/64")
            options.rate = 1e300
            options.concurrency = 8
            options.duration = .milliseconds(500)
            options.timeout = .milliseconds(500)
            let started = ContinuousClock.now
            let metrics = LoadMetrics()
            let result = try await LoadRunner(options: options, metrics: metrics).run()
            #expect(started.duration(to: .now) < .seconds(10))
            #expect(result.requests > 0)
            #expect(result.dropped == 1 << 50, "held at the largest count a result holds (2^50)")
            let decoded = try LoadResult.decode(try result.jsonData())
            #expect(decoded.dropped == result.dropped)
            let scraped = try LoadMetricsTests.parse(metrics.exposition())
            #expect(LoadMetricsTests.sum(scraped, "courier_load_dropped_total") == Double(result.dropped))
            #expect(LoadReport(result).text.contains("scheduled requests (the run fell more than its timeout behind the rate)"))
        }
    }

    @Test func errorStatusesAndTransportFailuresAreCountedApart() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = Scenario(requests: [
                .init(name: "ok", url: server.url("/status/200").absoluteString, weight: 1),
                .init(name: "unavailable", url: server.url("/status/503").absoluteString, weight: 1),
                .init(name: "refused", url: "http://127.0.0.1:\(unusedPort())/", weight: 1),
            ])
            options.concurrency = 6
            options.requests = 600
            let result = try await LoadRunner(options: options).run()
            #expect(result.requests == 600)
            let ok = try #require(result.endpoints["ok"])
            let unavailable = try #require(result.endpoints["unavailable"])
            let refused = try #require(result.endpoints["refused"])
            #expect(ok.requests + unavailable.requests + refused.requests == 600)
            // Equal weights: each gets about a third (seeded, so this is stable).
            for endpoint in [ok, unavailable, refused] { #expect((120...280).contains(endpoint.requests)) }
            #expect(ok.errors == 0)
            #expect(unavailable.errors == unavailable.requests)
            #expect(result.statusCodes[503] == unavailable.requests)
            #expect(result.errorKinds == ["connectionFailed": refused.requests])
            #expect(result.errors == unavailable.requests + refused.requests)
        }
    }

    /// The open model starts requests on schedule whatever the server does, and counts latency
    /// from the intended start: a server that takes 100 ms per request with at most 2 in flight
    /// cannot keep up with 50/s, and the backlog shows in the percentiles.
    @Test func theOpenModelCorrectsCoordinatedOmission() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/delay/100")
            options.rate = 50
            options.concurrency = 2
            options.requests = 40
            let result = try await LoadRunner(options: options).run()
            #expect(result.model == .open)
            #expect(result.rate == 50)
            #expect(result.requests == 40)
            // 40 requests at 20 per second of capacity take ≥ 2 s; the last waited ≥ 1 s for its slot.
            #expect(result.durationSeconds >= 1.9)
            #expect(result.latency.max >= 900_000)
            #expect(result.latency.min >= 100_000)
        }
    }

    @Test func anOpenRunFollowsItsRate() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/json/64")
            options.rate = 200
            options.concurrency = 8
            options.duration = .seconds(1)
            let result = try await LoadRunner(options: options).run()
            #expect((190...200).contains(result.requests)) // slots at 0, 5 ms, …, 995 ms
        }
    }

    /// Every request, warm-up included, passes the authorizer; only those after the warm-up count.
    @Test func warmUpRequestsAreNotRecorded() async throws {
        final class Counting: Authorizer {
            let calls = LockedValue(0)
            func authorize(_ request: inout HTTPRequest) async throws { calls.withLock { $0 += 1 } }
        }
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/json/64")
            options.concurrency = 4
            options.requests = 100
            options.warmup = .milliseconds(300)
            let runner = try LoadRunner(options: options)
            let counting = Counting()
            let result = try await withCheckedService(configuration: runner.serviceConfiguration) { service in
                try await runner.run(on: service, authorizer: counting)
            }
            #expect(result.requests == 100)
            #expect(result.latency.count == 100)
            #expect(counting.calls.withLock { $0 } > 101) // the probe, the warm-up's requests, then the 100
        }
    }

    /// The echo of the load's request is exactly as long as the echo of the same request sent
    /// by hand, and the hand-sent one shows the method, header, token and body arrived.
    @Test func headersBodyAndMethodGoOnTheWire() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/echo")
            options.method = "PUT"
            options.headers = [("X-Load", "yes")]
            options.bearerToken = "load-token"
            options.body = Data(#"{"a":1}"#.utf8)
            options.concurrency = 1
            options.requests = 1
            let runner = try LoadRunner(options: options)
            let (result, (echo, echoLength)) = try await withCheckedService(configuration: runner.serviceConfiguration) { service in
                let request = HTTPRequest(method: .put, url: server.url("/echo"),
                                          headers: ["X-Load": "yes", "Authorization": "Bearer load-token",
                                                    "Content-Type": "application/json"],
                                          body: .data(Data(#"{"a":1}"#.utf8)))
                let raw = try await service.send(request).body
                return (try await runner.run(on: service), (try JSONDecoder().decode(Echo.self, from: raw), raw.count))
            }
            #expect(echo.method == "PUT" && echo.body == #"{"a":1}"# && echo.header("X-Load") == "yes")
            #expect(echo.header("Authorization") == "Bearer load-token")
            #expect(result.statusCodes == [200: 1])
            #expect(result.bytesSent == 7)
            #expect(result.bytesReceived == Int64(echoLength))
        }
    }

    @Test func cancellingEndsTheRunWithWhatCompleted() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/json/64")
            options.concurrency = 8
            options.duration = .seconds(60)
            let completed = LockedValue(0)
            let run = Task {
                try await LoadRunner(options: options).run { progress in completed.withLock { $0 = progress.requests } }
            }
            #expect(await eventually { completed.withLock { $0 } > 0 })
            let cancelled = ContinuousClock.now
            run.cancel()
            let result = try await run.value
            // Well short of the 60 s the run would take: ended by the cancellation (0.3 s alone;
            // a loaded suite stretches it).
            #expect(ContinuousClock.now - cancelled < .seconds(20))
            #expect(result.requests > 0)
            #expect(result.errors == 0) // requests cut short are not failures
            #expect(result.durationSeconds < 30)
        }
    }

    @Test func badOptionsAreTypedErrors() {
        var options = LoadOptions()
        options.concurrency = 0
        #expect(throws: LoadError.self) { try LoadRunner(options: options) }
        options = LoadOptions()
        #expect(throws: LoadError.self) { try LoadRunner(options: options) } // no URL at all
        options.url = URL(string: "http://127.0.0.1/")!
        options.headers = [("X-Bad", "a\r\nInjected: 1")]
        #expect(throws: LoadError.self) { try LoadRunner(options: options) }
        #expect(throws: LoadError.self) { try Scenario(json: Data("[]".utf8)) }
        #expect(throws: LoadError.self) { try Scenario(json: Data(#"[{"url":"http://a/","weight":-1}]"#.utf8)) }
    }

    /// Options set in code past what any run can take: typed errors from `validate`, where a
    /// rate of 1e-300 trapped the loop thread ("Double value cannot be converted to UInt64").
    @Test func optionsPastAnyRunAreTypedErrors() throws {
        func rejected(_ change: (inout LoadOptions) throws -> Void) throws {
            var options = LoadOptions()
            options.url = URL(string: "http://127.0.0.1/")!
            try change(&options)
            #expect(throws: LoadError.self) { try LoadRunner.validate(options) }
        }
        try rejected { $0.rate = 1e-300 }
        try rejected { $0.concurrency = LoadOptions.mostInFlight + 1 }
        try rejected { $0.duration = .seconds(Int64.max) }
        try rejected { $0.timeout = .seconds(400_000_000) }
        try rejected { $0.warmup = LoadOptions.longestDuration + .seconds(1) }
        try rejected { $0.ramp = LoadRamp(.concurrency, stages: [try LoadStage(duration: .seconds(1), target: 1e300)]) }
        try rejected { $0.ramp = LoadRamp(.rate, stages: [try LoadStage(duration: .seconds(300_000_000), target: 5),
                                                           try LoadStage(duration: .seconds(300_000_000), target: 5)]) }
        try rejected { options in
            var stage = try LoadStage(duration: .seconds(1), target: 5)
            stage.seconds = .nan // a public `var`: checked again
            options.ramp = LoadRamp(.rate, stages: [stage])
        }
        var fine = LoadOptions()
        fine.url = URL(string: "http://127.0.0.1/")!
        fine.rate = LoadOptions.slowestRate
        try LoadRunner.validate(fine)
    }
}
