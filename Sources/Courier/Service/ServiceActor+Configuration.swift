import Foundation
import Logging
import Metrics
import Tracing

extension ServiceActor {
    /// Everything a service is configured with, in sections: find "timeouts" under
    /// ``transport``, "logging" under ``telemetry``.
    ///
    /// ```swift
    /// var configuration = ServiceActor.Configuration(authorizer: credentials)
    /// configuration.transport.timeouts.connect = .seconds(5)
    /// configuration.limits.connections.maxConnectionsPerHost = 4
    /// configuration.retry.maxRetries = 3
    /// configuration.telemetry.logger = Logger(label: "storage")
    /// ```
    ///
    /// Presets start from a purpose: ``interactive``, ``bulkTransfers``, ``resilient``.
    public struct Configuration: Sendable {
        /// How requests travel: timeouts, TLS, HTTP version, redirects, decompression, the
        /// largest buffered body, the User-Agent and the loop's IO backend.
        public var transport = Transport()
        /// How many requests run at once and how fast: connections, the service-wide query
        /// limit, batch sizes, rate limits and circuit breakers.
        public var limits = Limits()
        /// How failed requests are retried: queries, uploads, downloads, batches and token
        /// requests; queries can override it. Raw `send` and `stream` do not retry unless their
        /// ``RequestOptions`` say so.
        public var retry = RetryPolicy.default
        /// Credentials and the API key added to every query.
        public var auth = Auth()
        /// Logs, the HTTP traffic log, metrics and traces.
        public var telemetry = Telemetry()
        /// Limits on the JSON of responses.
        public var json = JSONLimits.default
        /// How queries behave: paging, a root URL override, caching, the application's name.
        public var queries = Queries()
        /// Seams for tests: a handler that answers without the network and the clock retries wait on.
        public var testing = TestHooks()
        /// The universe the service works in (``UniverseDomain``): its APIs' hosts under
        /// `googleapis.com` move to `<api>.<universe>`, and its requests carry only credentials of
        /// this universe. nil: `GOOGLE_CLOUD_UNIVERSE_DOMAIN` when set when the service starts,
        /// else `googleapis.com`; a running service's configuration holds the universe it
        /// resolved. A root URL set in ``queries`` or on a query is kept as it is.
        public var universeDomain: String?

        /// The defaults: 30 s to connect, 60 s idle, 10 connections per host, HTTP/2, Google's
        /// retry rules, no credentials.
        public init() {}

        /// The defaults, with `authorizer`: `ServiceActor(configuration: .init(authorizer: …))`.
        public init(authorizer: (any Authorizer)?) {
            auth.authorizer = authorizer
        }

        var transportSettings: TransportSettings {
            TransportSettings(timeouts: transport.timeouts, tls: transport.tls, httpVersion: transport.httpVersion,
                              followRedirects: transport.followRedirects, maxRedirects: transport.maxRedirects,
                              automaticDecompression: transport.automaticDecompression, userAgent: transport.userAgent,
                              maxResponseBodySize: transport.maxResponseBodySize, logger: telemetry.logger,
                              resumesCallersInPlace: transport.resumesCallersInPlace,
                              proxy: transport.proxy.resolved { getenv($0).map { String(cString: $0) } })
        }

        /// `api`'s root URL in this configuration's universe (``UniverseDomain``).
        func root(of api: APIDescription) -> URL {
            UniverseDomain.root(api.rootURL, in: universeDomain ?? UniverseDomain.googleDefault)
        }

        /// ``universeDomain``, else the environment's, else Google Cloud's; validated.
        func resolvedUniverseDomain(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } })
            throws(ConfigurationError) -> String
        {
            if let universeDomain {
                guard let domain = UniverseDomain.validated(universeDomain) else {
                    throw ConfigurationError("universeDomain", "is \(universeDomain.debugDescription); it must be a domain name")
                }
                return domain
            }
            guard let text = environment(UniverseDomain.environmentVariable), !text.isEmpty else { return UniverseDomain.googleDefault }
            guard let domain = UniverseDomain.validated(text) else {
                throw ConfigurationError(UniverseDomain.environmentVariable, "is \(text.debugDescription); it must be a domain name")
            }
            return domain
        }
    }
}
