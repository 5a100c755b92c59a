@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// The configuration in sections and its presets.
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
}
