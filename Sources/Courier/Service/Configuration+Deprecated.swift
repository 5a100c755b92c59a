import Foundation
import Logging
import Metrics
import Tracing

// The flat names of the configuration before it had sections, kept for one release so code
// written against them compiles (with a warning naming the new place).

extension ServiceActor.Configuration {
    @available(*, deprecated, renamed: "transport.timeouts")
    public var timeouts: Timeouts {
        get { transport.timeouts }
        set { transport.timeouts = newValue }
    }

    @available(*, deprecated, renamed: "transport.tls")
    public var tls: TLSConfiguration {
        get { transport.tls }
        set { transport.tls = newValue }
    }

    @available(*, deprecated, renamed: "transport.httpVersion")
    public var httpVersion: HTTPVersionPreference {
        get { transport.httpVersion }
        set { transport.httpVersion = newValue }
    }

    @available(*, deprecated, renamed: "transport.followRedirects")
    public var followRedirects: Bool {
        get { transport.followRedirects }
        set { transport.followRedirects = newValue }
    }

    @available(*, deprecated, renamed: "transport.maxRedirects")
    public var maxRedirects: Int {
        get { transport.maxRedirects }
        set { transport.maxRedirects = newValue }
    }

    @available(*, deprecated, renamed: "transport.automaticDecompression")
    public var automaticDecompression: Bool {
        get { transport.automaticDecompression }
        set { transport.automaticDecompression = newValue }
    }

    @available(*, deprecated, renamed: "transport.maxResponseBodySize")
    public var maxResponseBodySize: Int {
        get { transport.maxResponseBodySize }
        set { transport.maxResponseBodySize = newValue }
    }

    @available(*, deprecated, renamed: "transport.userAgent")
    public var userAgent: String {
        get { transport.userAgent }
        set { transport.userAgent = newValue }
    }

    @available(*, deprecated, renamed: "transport.loopBackend")
    public var loopBackend: LoopBackend {
        get { transport.loopBackend }
        set { transport.loopBackend = newValue }
    }

    @available(*, deprecated, renamed: "telemetry.logger")
    public var logger: Logger {
        get { telemetry.logger }
        set { telemetry.logger = newValue }
    }

    @available(*, deprecated, renamed: "telemetry.httpLog")
    public var httpLog: HTTPLogOptions? {
        get { telemetry.httpLog }
        set { telemetry.httpLog = newValue }
    }

    @available(*, deprecated, renamed: "telemetry.metricsFactory")
    public var metricsFactory: (any MetricsFactory)? {
        get { telemetry.metricsFactory }
        set { telemetry.metricsFactory = newValue }
    }

    @available(*, deprecated, renamed: "telemetry.tracer")
    public var tracer: (any Tracer)? {
        get { telemetry.tracer }
        set { telemetry.tracer = newValue }
    }

    @available(*, deprecated, renamed: "auth.apiKey")
    public var apiKey: String? {
        get { auth.apiKey }
        set { auth.apiKey = newValue }
    }

    @available(*, deprecated, renamed: "auth.authorizer")
    public var authorizer: (any Authorizer)? {
        get { auth.authorizer }
        set { auth.authorizer = newValue }
    }

    @available(*, deprecated, renamed: "queries.applicationName")
    public var applicationName: String? {
        get { queries.applicationName }
        set { queries.applicationName = newValue }
    }

    @available(*, deprecated, renamed: "queries.paging")
    public var paging: PagingPolicy {
        get { queries.paging }
        set { queries.paging = newValue }
    }

    @available(*, deprecated, renamed: "queries.rootURL")
    public var rootURL: URL? {
        get { queries.rootURL }
        set { queries.rootURL = newValue }
    }

    @available(*, deprecated, renamed: "queries.caching")
    public var caching: QueryCaching? {
        get { queries.caching }
        set { queries.caching = newValue }
    }

    @available(*, deprecated, renamed: "testing.handler")
    public var testHandler: TestHandler? {
        get { testing.handler }
        set { testing.handler = newValue }
    }

    @available(*, deprecated, renamed: "testing.clock")
    public var clock: any Clock<Duration> {
        get { testing.clock }
        set { testing.clock = newValue }
    }

    @available(*, deprecated, renamed: "json")
    public var jsonLimits: JSONLimits {
        get { json }
        set { json = newValue }
    }

    @available(*, deprecated, renamed: "limits.maxConcurrentQueries")
    public var maxConcurrentQueries: Int? {
        get { limits.maxConcurrentQueries }
        set { limits.maxConcurrentQueries = newValue }
    }

    @available(*, deprecated, renamed: "limits.batchConcurrency")
    public var batchConcurrency: Int {
        get { limits.batchConcurrency }
        set { limits.batchConcurrency = newValue }
    }

    @available(*, deprecated, renamed: "limits.maxBatchSize")
    public var maxBatchSize: Int {
        get { limits.maxBatchSize }
        set { limits.maxBatchSize = newValue }
    }

    @available(*, deprecated, renamed: "limits.rateLimits")
    public var rateLimits: RateLimits? {
        get { limits.rateLimits }
        set { limits.rateLimits = newValue }
    }

    @available(*, deprecated, renamed: "limits.circuitBreaker")
    public var circuitBreaker: CircuitBreakerPolicy? {
        get { limits.circuitBreaker }
        set { limits.circuitBreaker = newValue }
    }
}

extension ServiceActor.Configuration.Limits {
    @available(*, deprecated, renamed: "connections.maxConnectionsPerHost")
    public var maxConnectionsPerHost: Int {
        get { connections.maxConnectionsPerHost }
        set { connections.maxConnectionsPerHost = newValue }
    }

    @available(*, deprecated, renamed: "connections.maxConnectionsTotal")
    public var maxConnectionsTotal: Int {
        get { connections.maxConnectionsTotal }
        set { connections.maxConnectionsTotal = newValue }
    }

    @available(*, deprecated, renamed: "connections.maxConcurrentTransfersPerHost")
    public var maxConcurrentTransfersPerHost: Int {
        get { connections.maxConcurrentTransfersPerHost }
        set { connections.maxConcurrentTransfersPerHost = newValue }
    }

    @available(*, deprecated, renamed: "connections.maxConcurrentTransfers")
    public var maxConcurrentTransfers: Int {
        get { connections.maxConcurrentTransfers }
        set { connections.maxConcurrentTransfers = newValue }
    }

    @available(*, deprecated, renamed: "connections.maxConcurrentStreamsPerConnection")
    public var maxConcurrentStreamsPerConnection: Int {
        get { connections.maxConcurrentStreamsPerConnection }
        set { connections.maxConcurrentStreamsPerConnection = newValue }
    }
}
