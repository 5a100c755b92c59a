@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import MetricsTestKit
import CourierTestSupport
import Testing

/// Rate limits: the pure adaptive bucket, then the limiter against the test server's quota.
@Suite struct RateLimitTests {
    // MARK: AdaptiveRate, a pure value

    @Test func tokensComeAtTheRateAfterTheBurst() {
        var rate = AdaptiveRate(limit: .perSecond(10, burst: 2, adaptive: false), now: .zero)
        let result1 = rate.take(now: .zero)
        #expect(result1 == nil)
        let result2 = rate.take(now: .zero)
        #expect(result2 == nil)
        let result3 = rate.take(now: .zero)
        #expect(result3 == .milliseconds(100))
        let result4 = rate.take(now: .milliseconds(50))
        #expect(result4 == .milliseconds(50))
        let result5 = rate.take(now: .milliseconds(100))
        #expect(result5 == nil)
    }

    /// A rate set after `init` (a `var`) to 1e-300, which validation takes as above zero: the
    /// wait is held at 10⁹ s instead of trapping as a Duration of 1e300 s.
    @Test func aVanishingRateWaitsLongWithoutTrapping() {
        var limit = RateLimit.perSecond(10, burst: 1, adaptive: false)
        limit.requestsPerSecond = 1e-300
        var rate = AdaptiveRate(limit: limit, now: .zero)
        #expect(rate.take(now: .zero) == nil) // the burst
        #expect(rate.take(now: .zero) == .seconds(1_000_000_000))
    }

    @Test func aThrottleBringsTheRateJustBelowWhatTheServerAccepted() throws {
        var rate = AdaptiveRate(limit: .perSecond(500), now: .zero)
        for _ in 0..<100 { _ = rate.observe(.accepted, admitted: .zero, now: .milliseconds(200)) }
        let observed6 = rate.observe(.throttled, admitted: .milliseconds(190), now: .milliseconds(210))
        let change = try #require(observed6)
        #expect(change.from == 500 && change.throttled)
        #expect(abs(rate.rate - 95) < 0.001, "\(rate.rate)") // 95 % of 100 accepted over the window
    }

    @Test func answersToRequestsSentAtTheOldRateDoNotDecreaseItAgain() {
        var rate = AdaptiveRate(limit: .perSecond(100), now: .zero)
        let result7 = rate.observe(.throttled, admitted: .zero, now: .milliseconds(10))
        #expect(result7 != nil)
        let after = rate.rate
        #expect(after == 50)
        // Admitted before the decrease, and within the window after it.
        let result8 = rate.observe(.throttled, admitted: .milliseconds(5), now: .seconds(2))
        #expect(result8 == nil)
        let result9 = rate.observe(.throttled, admitted: .milliseconds(20), now: .milliseconds(500))
        #expect(result9 == nil)
        #expect(rate.rate == after)
        let result10 = rate.observe(.throttled, admitted: .milliseconds(1_500), now: .milliseconds(1_600))
        #expect(result10 != nil)
        #expect(rate.rate == after / 2) // nothing accepted in between: halved
        var floor = AdaptiveRate(limit: .perSecond(2), now: .zero)
        for second in 0..<5 {
            _ = floor.observe(.throttled, admitted: .seconds(second), now: .seconds(second) + .milliseconds(1))
        }
        #expect(floor.rate == 1) // the floor
    }

    @Test func theRateClimbsByAStepPerUnthrottledWindowThatWantedMore() {
        var rate = AdaptiveRate(limit: .perSecond(100), now: .zero)
        for _ in 0..<50 { _ = rate.observe(.accepted, admitted: .zero, now: .milliseconds(900)) }
        _ = rate.observe(.throttled, admitted: .zero, now: .milliseconds(950))
        let low = rate.rate
        #expect(abs(low - 47.5) < 0.001)
        // A window in which nobody waited: no climb.
        let result11 = rate.roll(now: .milliseconds(2_000))
        #expect(result11 == nil)
        // A window in which requests waited for tokens: one step, 5 % of the lowered rate.
        while rate.take(now: .milliseconds(2_100)) == nil {}
        let change = rate.roll(now: .milliseconds(3_000))
        #expect(change?.throttled == false)
        #expect(abs(rate.rate - low * 1.05) < 0.001)
    }

    @Test func aFixedRateNeverAdapts() {
        var rate = AdaptiveRate(limit: .perSecond(100, adaptive: false), now: .zero)
        let result12 = rate.observe(.throttled, admitted: .zero, now: .milliseconds(10))
        #expect(result12 == nil)
        #expect(rate.rate == 100)
        #expect(rate.throttledCount == 1)
    }

    // MARK: Against the test server

    /// Waiting for a token is cancellable: a cancelled waiter leaves at once and is never sent.
    @Test func aWaitForATokenIsCancellable() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.limits.rateLimits = RateLimits(.perMinute(1, burst: 1, adaptive: false))
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(Notes.get("note-0001")) // the one token
                let before = server.counters.requests
                let waiting = Task { try await service.execute(Notes.get("note-0001")) }
                #expect(await eventually { service.rateLimitStatus().first?.queued == 1 })
                let started = ContinuousClock.now
                waiting.cancel()
                await #expect(throws: CancellationError.self) { try await waiting.value }
                #expect(ContinuousClock.now - started < .seconds(30)) // not the next token's 60 s
                #expect(service.rateLimitStatus().first?.queued == 0)
                #expect(server.counters.requests == before)
            }
        }
    }

    /// Shutting the service down fails the requests waiting for tokens at once.
    @Test func shutdownFailsTheWaiters() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.limits.rateLimits = RateLimits(.perMinute(1, burst: 1, adaptive: false))
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(Notes.get("note-0001"))
                let waiting = Task { try await service.execute(Notes.get("note-0001")) }
                #expect(await eventually { service.rateLimitStatus().first?.queued == 1 })
                let started = ContinuousClock.now
                await service.shutdown()
                let error = await #expect(throws: TransportError.self) { try await waiting.value }
                #expect(error == .shutdown)
                #expect(ContinuousClock.now - started < .seconds(30)) // not the next token's 60 s
            }
        }
    }

    /// Keys: a query's own key wins over the scope; per-host scope splits by host and port.
    @Test func keysFollowTheScopeUnlessNamed() async throws {
        let limits = RateLimits(.perSecond(10), scope: .host)
        let limiter = RateLimiter(limits, time: ServiceTime(ContinuousClock()), events: EventHub(),
                                  metrics: PipelineMetrics(factory: nil))
        #expect(limiter.key(explicit: nil, api: "storage", host: "a:1") == "a:1")
        #expect(limiter.key(explicit: "bulk", api: "storage", host: "a:1") == "bulk")
        let byAPI = RateLimiter(RateLimits(.perSecond(10)), time: ServiceTime(ContinuousClock()), events: EventHub(),
                                metrics: PipelineMetrics(factory: nil))
        #expect(byAPI.key(explicit: nil, api: "storage", host: "a:1") == "storage")
        #expect(byAPI.key(explicit: nil, api: nil, host: "a:1") == "a:1")
    }
}
