@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// Settings out of range are a ``ConfigurationError`` naming them when the service starts, and
/// the arithmetic behind them never traps, whatever a query's own policy holds (issue 51).
@Suite struct ConfigurationValidationTests {
    static let cases: [(String, @Sendable (inout ServiceActor.Configuration) -> Void)] = [
        ("transport.timeouts.connect", { $0.transport.timeouts.connect = .zero }),
        ("transport.timeouts.total", { $0.transport.timeouts.total = .seconds(-1) }),
        ("transport.maxRedirects", { $0.transport.maxRedirects = -1 }),
        ("retry.maxRetries", { $0.retry.maxRetries = -3 }),
        ("retry.multiplier", { $0.retry.multiplier = .nan }),
        ("retry.initialDelay.upperBound", { $0.retry.initialDelay = 0...Double.infinity }),
        ("retry.deadline", { $0.retry.deadline = .zero }),
        ("limits.connections.maxConnectionsPerHost", { $0.limits.connections.maxConnectionsPerHost = 0 }),
        ("limits.maxConcurrentQueries", { $0.limits.maxConcurrentQueries = 0 }),
        ("limits.rateLimits.limit.window", { $0.limits.rateLimits = RateLimits(RateLimit(requestsPerSecond: 10, window: .zero)) }),
        ("limits.rateLimits.limit.requestsPerSecond", {
            var limit = RateLimit.perSecond(10)
            limit.requestsPerSecond = .nan
            $0.limits.rateLimits = RateLimits(limit)
        }),
        ("limits.circuitBreaker.failureThreshold", {
            var policy = CircuitBreakerPolicy()
            policy.failureThreshold = 0 // the initializer clamps; the property does not
            $0.limits.circuitBreaker = policy
        }),
        ("limits.circuitBreaker.openDuration", { $0.limits.circuitBreaker = CircuitBreakerPolicy(openDuration: .zero) }),
    ]

    @Test(arguments: 0..<cases.count)
    func aSettingOutOfRangeIsNamed(index: Int) throws {
        let (setting, change) = Self.cases[index]
        var configuration = ServiceActor.Configuration()
        change(&configuration)
        do {
            _ = try ServiceActor(configuration: configuration)
            Issue.record("\(setting): the service started")
        } catch let error as ConfigurationError {
            #expect(error == .invalidSetting)
            #expect(error.setting == setting, "\(error)")
            #expect(error.message.hasPrefix(setting))
        }
    }

    @Test func theDefaultsAndThePresetsAreValid() throws {
        for configuration in [ServiceActor.Configuration(), .interactive, .bulkTransfers, .resilient] {
            try configuration.validate()
        }
    }

    /// A query's own policy is not validated by the service: its waits must still be numbers.
    /// Limits as large as an Int holds mean "no limit" and start a service that serves: a
    /// per-host limit of Int.max overflowed the idle-connection cache's size (four hosts' worth)
    /// and stopped the process as the service started.
    @Test func theLargestLimitsStartAServiceThatServes() async throws {
        try await withServerAndService(configure: {
            $0.limits.connections = ConnectionLimits(maxConnectionsPerHost: .max, maxConnectionsTotal: .max, maxConcurrentTransfersPerHost: .max,
                                                     maxConcurrentTransfers: .max, maxConcurrentStreamsPerConnection: .max)
            $0.limits.maxConcurrentQueries = .max
            $0.limits.batchConcurrency = .max
            $0.limits.maxBatchSize = .max
        }) { server, service in
            let response = try await service.send(HTTPRequest(url: server.url("/json/64")))
            #expect(response.status == 200)
        }
    }

    @Test func retryWaitsNeverTrapWhateverThePolicy() {
        var policy = RetryPolicy(maxRetries: 5000, initialDelay: 0...1, multiplier: 2, maxDelay: .seconds(32),
                                 maxTotalDelay: .seconds(Int64.max / 2), deadline: nil)
        var machine = RetryStateMachine(policy: policy, queryName: "q")
        var last = Duration.zero
        for _ in 0..<2000 { // 2^1024 overflows a Double: the scale is infinite, 0 × ∞ is NaN
            guard case .retry(let delay) = machine.decide(.response(status: 503, retryAfter: nil, reasons: []), idempotent: true,
                                                          random: { $0.upperBound }) else { Issue.record("gave up"); return }
            last = delay
        }
        #expect(last == .seconds(32))
        policy.multiplier = .nan
        policy.maxDelay = .seconds(Int64.max)
        machine = RetryStateMachine(policy: policy, queryName: "q")
        if case .retry(let delay) = machine.decide(.response(status: 503, retryAfter: nil, reasons: []), idempotent: true) {
            #expect(delay >= .zero)
        }
    }

    @Test func durationsTooLongForMillisecondsSaturate() {
        #expect(Duration.seconds(Int64.max).milliseconds == .max)
        #expect(Duration.seconds(Int64.min).milliseconds == .min)
        #expect(Duration.milliseconds(1500).milliseconds == 1500)
    }
}
