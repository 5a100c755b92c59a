@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// The configuration in sections, its presets, and the flat names of earlier releases that
/// still forward to the sections.
@Suite struct ConfigurationTests {
    @Test func defaultsLiveInTheirSections() {
        let configuration = ServiceActor.Configuration()
        #expect(configuration.transport.timeouts.connect == .seconds(30))
        #expect(configuration.transport.timeouts.idle == .seconds(60))
        #expect(configuration.transport.httpVersion == .http2)
        #expect(configuration.limits.connections.maxConnectionsPerHost == 10)
        #expect(configuration.limits.maxConcurrentQueries == nil)
        #expect(configuration.limits.circuitBreaker == nil)
        #expect(configuration.retry.maxRetries == RetryPolicy.default.maxRetries)
        #expect(configuration.auth.authorizer == nil)
        #expect(configuration.queries.caching == nil)
        #expect(configuration.json.maxDepth == JSONLimits.default.maxDepth)
        #expect(configuration.testing.handler == nil)
        let settings = configuration.transportSettings
        #expect(settings.timeouts.connect == .seconds(30) && settings.maxRedirects == 10)
    }

    @Test func presetsChangeOnlyWhatTheySay() {
        let interactive = ServiceActor.Configuration.interactive
        #expect(interactive.transport.timeouts.connect == .seconds(5))
        #expect(interactive.transport.timeouts.idle == .seconds(15))
        #expect(interactive.retry.deadline == .seconds(10) && interactive.retry.maxRetries == 3)

        let bulk = ServiceActor.Configuration.bulkTransfers
        #expect(bulk.transport.timeouts.idle == .seconds(300))
        #expect(bulk.transport.maxResponseBodySize == 1 << 30)
        #expect(bulk.retry.deadline == .seconds(600))

        let resilient = ServiceActor.Configuration.resilient
        #expect(resilient.limits.circuitBreaker != nil)
        #expect(resilient.queries.caching != nil)
        #expect(resilient.limits.maxConcurrentQueries == 256)
        #expect(resilient.transport.timeouts.connect == ServiceActor.Configuration().transport.timeouts.connect)
    }

    @Test func aPresetRunsAService() async throws {
        var configuration = ServiceActor.Configuration.resilient
        configuration.telemetry.logger = SuiteLog.logger
        try await withServerAndService(configure: { $0 = configuration }) { server, service in
            let response = try await service.send(HTTPRequest(url: server.url("/echo")))
            #expect(response.status == 200)
        }
    }

    @Test func theFlatNamesOfEarlierReleasesForwardToTheSections() {
        let configuration = FlatNames.configure(FlatNames.self)
        #expect(configuration.transport.timeouts.connect == .seconds(3))
        #expect(configuration.limits.connections.maxConnectionsPerHost == 7)
        #expect(configuration.limits.maxConcurrentQueries == 12)
        #expect(configuration.json.maxDepth == 9)
        #expect(configuration.queries.rootURL?.port == 1)
        #expect(configuration.auth.apiKey == "k")
    }
}

/// Sets the configuration through the deprecated flat names. The witness is deprecated, so
/// using them in it does not warn; the test calls it through the protocol's requirement, which
/// is not.
protocol FlatNamesProbe {
    static func configured() -> ServiceActor.Configuration
}

enum FlatNames: FlatNamesProbe {
    @available(*, deprecated, message: "exercises the flat names of earlier releases")
    static func configured() -> ServiceActor.Configuration {
        var configuration = ServiceActor.Configuration()
        configuration.timeouts = Timeouts(connect: .seconds(3))
        configuration.limits.maxConnectionsPerHost = 7
        configuration.maxConcurrentQueries = 12
        configuration.jsonLimits = JSONLimits(maxDepth: 9, maxBytes: 1 << 10)
        configuration.rootURL = URL(string: "http://127.0.0.1:1/")
        configuration.apiKey = "k"
        return configuration
    }

    static func configure<Probe: FlatNamesProbe>(_ probe: Probe.Type) -> ServiceActor.Configuration { probe.configured() }
}
