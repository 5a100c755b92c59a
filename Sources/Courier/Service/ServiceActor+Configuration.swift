import Foundation
import Logging
import Metrics
import Tracing

extension ServiceActor {
    /// How a service connects, times out, verifies TLS and logs.
    public struct Configuration: Sendable {
        /// Connection and concurrency limits; 10 connections per host by default.
        public var limits = ConnectionLimits()
        /// Default timeouts: 30 s to connect, 60 s idle, no overall deadline.
        public var timeouts = Timeouts(connect: .seconds(30), idle: .seconds(60))
        public var tls = TLSConfiguration()
        public var httpVersion = HTTPVersionPreference.http2
        public var followRedirects = true
        public var maxRedirects = 10
        /// Ask for gzip/deflate/brotli/zstd and decode them transparently.
        public var automaticDecompression = true
        /// The largest body ``ServiceActor/send(_:options:)`` buffers; a larger one fails with ``TransportError/bodyTooLarge``.
        public var maxResponseBodySize = 64 << 20
        /// Sent when a request has no User-Agent of its own.
        public var userAgent = CourierVersion.userAgent
        /// Receives one trace-level line per transfer start and end; the Authorization header
        /// value and URL credentials are never logged.
        public var logger = Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() })
        /// How the loop waits for IO; see `Docs/Architecture.md`.
        public var loopBackend = LoopBackend.epoll

        // MARK: Queries

        /// Sent as `key=` with every query (GTLR's `APIKey`).
        public var apiKey: String?
        /// Adds credentials to every query; see `Docs/Auth.md`.
        public var authorizer: (any Authorizer)?
        /// Prefixed to the User-Agent of queries: `MyApp/1.2 Courier/0.1.0 (Linux; Swift 6.3)`.
        public var applicationName: String?
        /// How failed requests are retried: queries, uploads, downloads, batches and token
        /// requests; queries can override it. Raw `send` and `stream` do not retry unless their
        /// ``RequestOptions`` say so.
        public var retry = RetryPolicy.default
        /// Whether collection queries fetch one page or all; queries can override it.
        public var paging = PagingPolicy.single
        /// Answers every request of every operation without the network (see `CourierTesting`):
        /// queries, raw requests, streams, downloads, batches, uploads and token requests.
        public var testHandler: TestHandler?
        /// Where request and operation metrics go (Docs/Pipeline.md lists them); nil: the
        /// factory bootstrapped in `MetricsSystem`. With neither, nothing is counted.
        public var metricsFactory: (any MetricsFactory)?
        /// Sends every query to this root URL instead of its API's (an emulator, a test server).
        public var rootURL: URL?
        /// Limits on the JSON of responses.
        public var jsonLimits = JSONLimits.default
        /// The clock retries wait on; tests inject a virtual one.
        public var clock: any Clock<Duration> = ContinuousClock()
        /// Writes every query's HTTP exchange to files (GTMSessionFetcherLogging); nil turns it off.
        public var httpLog: HTTPLogOptions?

        // MARK: Concurrency and batches

        /// At most this many requests talk to servers at once, service-wide, whatever the
        /// operation; the rest wait in FIFO order (the seeds' "don't hog the backend"). Token
        /// requests are exempt. nil: no limit beyond the transport's.
        public var maxConcurrentQueries: Int?
        /// Queries a task-group batch runs at once, unless the batch says otherwise.
        public var batchConcurrency = 10
        /// Queries per wire-batch request (Google allows up to 1,000); larger batches are split.
        public var maxBatchSize = 100

        // MARK: Resilience, caching and tracing

        /// Requests per second per API, host or key, adapting to the server's throttling; every
        /// attempt of every operation takes a token (token requests excepted). nil: no rate
        /// limit. See ``RateLimits`` and Docs/RateLimiting.md.
        public var rateLimits: RateLimits?
        /// Fails requests to a host fast after a run of failures, until a probe succeeds; queries
        /// only, unless the policy guards raw requests too. nil (the default): off. See
        /// ``CircuitBreakerPolicy`` and Docs/CircuitBreaking.md.
        public var circuitBreaker: CircuitBreakerPolicy?
        /// An ETag cache and coalescing of identical in-flight GETs, for queries. nil (the
        /// default): off. See ``QueryCaching`` and Docs/Caching.md.
        public var caching: QueryCaching?
        /// Where operation and attempt spans go (Docs/Tracing.md); nil: the tracer bootstrapped in
        /// `InstrumentationSystem`. With neither, nothing is traced.
        public var tracer: (any Tracer)?

        public init() {}

        /// The defaults, with `authorizer`: `ServiceActor(configuration: .init(authorizer: …))`.
        public init(authorizer: (any Authorizer)?) {
            self.authorizer = authorizer
        }

        var transportSettings: TransportSettings {
            TransportSettings(timeouts: timeouts, tls: tls, httpVersion: httpVersion, followRedirects: followRedirects,
                              maxRedirects: maxRedirects, automaticDecompression: automaticDecompression,
                              userAgent: userAgent, maxResponseBodySize: maxResponseBodySize, logger: logger)
        }
    }
}

/// Courier's version and the User-Agent it sends.
public enum CourierVersion {
    public static let version = "0.1.0"

    /// `Courier/<version> (Linux; Swift <version>)`.
    public static let userAgent = "Courier/\(version) (Linux; Swift \(swiftVersion))"

    static var swiftVersion: String {
        #if swift(>=6.4)
        "6.4"
        #elseif swift(>=6.3)
        "6.3"
        #elseif swift(>=6.2)
        "6.2"
        #elseif swift(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }
}
