@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import MetricsTestKit
import CourierTestSupport
import Testing

/// The 429 storm, a bound over real time: `make test` runs it alone, after the rest
/// (`TIMED_TESTS`), so the client is not starved below the quota by the parallel suite.
@Suite struct RateLimitStormTests {
    /// A server quota of 50 requests per second with 429 `RESOURCE_EXHAUSTED` beyond; the
    /// client believes 250. Once the limiter has met the quota (the first window with a 429),
    /// and one window later to react, every one-second window at the server stays within 10 %
    /// of the quota, retries included; and all 400 queries succeed.
    @Test func theAdaptiveLimiterConvergesOnTheServersQuotaAndLosesNothing() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let injector = FaultInjector("quota-50")
            let metrics = TestMetrics()
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = injector
            configuration.limits.rateLimits = RateLimits(.perSecond(250))
            configuration.telemetry.metricsFactory = metrics
            try await withCheckedService(configuration: configuration) { service in
                let events = service.events
                let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<400 {
                        group.addTask { (try? await service.execute(Notes.get("note-0001"))) == nil }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(failures == 0, "\(failures) queries failed")
                let windows = server.quotas.windows(injector.header)
                let summary = windows.map { "\($0.accepted)+\($0.refused)" }.joined(separator: " ")
                print("quota windows (accepted+refused):", summary)
                let met = try #require(windows.firstIndex { $0.refused > 0 }, "the quota was never met: \(summary)")
                for (index, window) in windows.enumerated() where index > met + 1 {
                    #expect(window.total <= 55, "window \(index): \(summary)")
                }
                #expect(windows.count - met >= 4, "too little left after convergence to judge: \(summary)")
                #expect(windows.reduce(0) { $0 + $1.accepted } == 400, "\(summary)")
                let status = try #require(service.rateLimitStatus().first)
                #expect(status.key == "notes" && status.throttled > 0)
                #expect(status.requestsPerSecond > 40 && status.requestsPerSecond < 55, "\(status)")
                // Observable: events and metrics.
                await service.shutdown()
                var decreases = 0
                for await event in events {
                    if case .rateLimitChanged(let key, _, _, true) = event, key == "notes" { decreases += 1 }
                }
                #expect(decreases >= 1)
                #expect(metrics.counterTotal(label: "courier_rate_limit_throttled_total", dimensions: [("key", "notes")]) >= 1)
                #expect(!metrics.timers(label: "courier_rate_limit_wait_seconds").isEmpty)
                let rate = try metrics.expectGauge("courier_rate_limit_requests_per_second", [("key", "notes")])
                #expect((rate.lastValue ?? 0) > 40)
            }
        }
    }
}
