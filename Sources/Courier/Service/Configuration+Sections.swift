import Foundation
import Logging
import Metrics
import Tracing

extension ServiceActor.Configuration {
    /// How requests travel.
    public struct Transport: Sendable {
        /// Default timeouts: 30 s to connect, 60 s idle, no overall deadline.
        public var timeouts = Timeouts(connect: .seconds(30), idle: .seconds(60))
        /// Certificate verification and client certificates.
        public var tls = TLSConfiguration()
        /// HTTP/2 when the server offers it (the default), or HTTP/1.1 only.
        public var httpVersion = HTTPVersionPreference.http2
        /// Whether 3xx answers are followed, and how many at most.
        public var followRedirects = true
        public var maxRedirects = 10
        /// Offer `Accept-Encoding: deflate, gzip` and decode a compressed body transparently.
        /// Courier decodes it itself, so a body whose gzip or deflate stream stops before its end
        /// fails with ``TransportError/protocolError`` even when the response's framing was complete
        /// (libcurl's decoding took such a body for a whole one). A request that names its own
        /// `Accept-Encoding` sends that one: an answer in gzip or deflate is decoded the same way,
        /// one in another coding (br, zstd) arrives as sent, `Content-Encoding` kept; a body written to a file
        /// (``ServiceActor/send(_:writingBodyTo:append:options:)``) is neither offered nor decoded.
        public var automaticDecompression = true
        /// The largest body ``ServiceActor/send(_:options:)`` buffers; a larger one fails with ``TransportError/bodyTooLarge``.
        public var maxResponseBodySize = 64 << 20
        /// Sent when a request has no User-Agent of its own.
        public var userAgent = CourierVersion.userAgent
        /// The proxy requests go through: by default the one the environment names when the
        /// service starts (`https_proxy`, `no_proxy` and the rest, read as libcurl reads them).
        public var proxy = ProxyConfiguration.environment
        /// How the loop waits for IO; see `Docs/Architecture.md`.
        public var loopBackend = LoopBackend.epoll
        /// Whether a task without an executor preference whose request completes while nothing
        /// else is in flight continues on the service's loop thread, until it next suspends,
        /// instead of waking a thread of the global pool: one request at a time then costs one
        /// thread wake, not two or three (`Docs/Performance.md`). A caller that computes for
        /// over 1 ms after its response holds the loop meanwhile, so after two such runs in a
        /// row running in place pauses for a hundred times as long. Turn it off when callers block their thread
        /// (which Swift concurrency forbids anyway) or must never share the loop's.
        public var resumesCallersInPlace = true

        public init() {}
    }

    /// How many requests run at once, and how fast.
    public struct Limits: Sendable {
        /// Connections and transfers per host and overall; 10 connections per host by default.
        public var connections = ConnectionLimits()
        /// At most this many requests talk to servers at once, service-wide, whatever the
        /// operation; the rest wait in FIFO order (the seeds' "don't hog the backend"). Token
        /// requests are exempt. nil: no limit beyond the transport's.
        public var maxConcurrentQueries: Int?
        /// Queries a task-group batch runs at once, unless the batch says otherwise.
        public var batchConcurrency = 10
        /// Queries per wire-batch request (Google allows up to 1,000); larger batches are split.
        public var maxBatchSize = 100
        /// Requests per second per API, host or key, adapting to the server's throttling; every
        /// attempt of every operation takes a token (token requests excepted). nil: no rate
        /// limit. See ``RateLimits`` and Docs/RateLimiting.md.
        public var rateLimits: RateLimits?
        /// Fails requests to a host fast after a run of failures, until a probe succeeds; queries
        /// only, unless the policy guards raw requests too. nil (the default): off. See
        /// ``CircuitBreakerPolicy`` and Docs/CircuitBreaking.md.
        public var circuitBreaker: CircuitBreakerPolicy?

        public init() {}
    }

    /// Credentials and the API key.
    public struct Auth: Sendable {
        /// Adds credentials to every query; see `Docs/Auth.md`.
        public var authorizer: (any Authorizer)?
        /// Sent as `key=` with every query (GTLR's `APIKey`).
        public var apiKey: String?

        public init() {}
    }

    /// Logs, the traffic log, metrics and traces.
    public struct Telemetry: Sendable {
        /// Receives one trace-level line per transfer start and end; the Authorization header
        /// value and URL credentials are never logged. Whether it takes trace lines is read
        /// once, when the service starts: a handler whose level changes later keeps the first answer.
        public var logger = Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Writes every query's HTTP exchange to files (GTMSessionFetcherLogging); nil turns it off.
        public var httpLog: HTTPLogOptions?
        /// Where request and operation metrics go (Docs/Pipeline.md lists them); nil: the
        /// factory bootstrapped in `MetricsSystem`. With neither, nothing is counted.
        public var metricsFactory: (any MetricsFactory)?
        /// Where operation and attempt spans go (Docs/Tracing.md); nil: the tracer bootstrapped in
        /// `InstrumentationSystem`. With neither, nothing is traced.
        public var tracer: (any Tracer)?

        public init() {}
    }

    /// How queries behave.
    public struct Queries: Sendable {
        /// Prefixed to the User-Agent of queries: `MyApp/1.2 Courier/0.1.0 (Linux; Swift 6.3)`.
        public var applicationName: String?
        /// Whether collection queries fetch one page or all; queries can override it.
        public var paging = PagingPolicy.single
        /// Sends every query to this root URL instead of its API's (an emulator, a test server).
        public var rootURL: URL?
        /// An ETag cache and coalescing of identical in-flight GETs, for queries. nil (the
        /// default): off. See ``QueryCaching`` and Docs/Caching.md.
        public var caching: QueryCaching?
        /// The APIs, by Discovery name, whose queries send Cloud Storage's invocation headers on
        /// each request, as Google's Storage libraries do: `x-goog-gcs-idempotency-token` (one
        /// random ID for all the attempts of a request) and `x-goog-api-client:
        /// gccl-invocation-id/<ID> gccl-attempt-count/<n> gl-swift/<version>`. `["storage"]` by
        /// default; `[]` sends them nowhere. They change nothing about what is retried
        /// (Docs/Reliability.md, "Invocation headers").
        public var invocationHeaderAPIs: Set<String> = [InvocationHeaders.api]

        public init() {}
    }

    /// Seams for tests.
    public struct TestHooks: Sendable {
        /// Answers every request of every operation without the network (see `CourierTesting`):
        /// queries, raw requests, streams, downloads, batches, uploads and token requests.
        public var handler: TestHandler?
        /// The clock retries, rate limits and circuit breakers wait on; tests inject a virtual one.
        public var clock: any Clock<Duration> = ContinuousClock()

        public init() {}
    }
}

extension ServiceActor.Configuration.Auth: CustomStringConvertible {
    /// The authorizer (each describes itself without its secrets) and the API key as `_snip_`:
    /// printing a service's configuration showed the key before.
    public var description: String {
        "Auth(authorizer: \(authorizer.map { "\($0)" } ?? "none"), apiKey: \(apiKey == nil ? "none" : Redaction.placeholder))"
    }
}
