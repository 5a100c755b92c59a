import Foundation

/// A request rate a client keeps to, as Google publishes quotas: requests per second or per
/// minute. With `adaptive` (the default) the rate follows the server: it drops when the server
/// throttles (429, `RESOURCE_EXHAUSTED`, `rateLimitExceeded`) and climbs back while it does not,
/// never above ``requestsPerSecond``.
///
/// ```swift
/// // Cloud Storage's JSON API: 1,000 object reads per second per project, say.
/// configuration.limits.rateLimits = RateLimits(.perSecond(1_000))
/// // A per-minute quota, per API, with a tighter limit for one of them.
/// configuration.limits.rateLimits = RateLimits(.perMinute(6_000), scope: .api, overrides: ["tasks": .perMinute(600)])
/// ```
///
/// Docs/RateLimiting.md explains how the rate adapts.
public struct RateLimit: Sendable, Hashable {
    /// The most requests per second this limit sends: the published quota, or a guess above it.
    public var requestsPerSecond: Double
    /// Requests that may go at once after an idle spell; nil: 20 ms worth at the current rate
    /// (at least 1), which keeps any one-second window within 2 % of the rate.
    public var burst: Int?
    /// Follow the server's throttling (see the type's documentation); false: a fixed rate.
    public var adaptive: Bool
    /// The adaptive rate never drops below this many requests per second.
    public var minimumRequestsPerSecond: Double
    /// The span a quota is counted over (1 s for per-second quotas, 60 s for per-minute ones):
    /// the rate reacts at most once per window, measures what the server accepted over one,
    /// and climbs one step per window without throttling.
    public var window: Duration

    public init(requestsPerSecond: Double, burst: Int? = nil, adaptive: Bool = true, minimumRequestsPerSecond: Double? = nil,
                window: Duration = .seconds(1)) {
        self.requestsPerSecond = max(requestsPerSecond, 0.001)
        self.burst = burst
        self.adaptive = adaptive
        self.minimumRequestsPerSecond = minimumRequestsPerSecond ?? min(1, self.requestsPerSecond)
        self.window = window
    }

    /// `requests` per second, counted over one-second windows.
    public static func perSecond(_ requests: Double, burst: Int? = nil, adaptive: Bool = true) -> RateLimit {
        RateLimit(requestsPerSecond: requests, burst: burst, adaptive: adaptive)
    }

    /// `requests` per minute, counted over one-minute windows, as most Google API quotas are.
    public static func perMinute(_ requests: Double, burst: Int? = nil, adaptive: Bool = true) -> RateLimit {
        RateLimit(requestsPerSecond: requests / 60, burst: burst, adaptive: adaptive,
                  minimumRequestsPerSecond: min(1, requests / 60), window: .seconds(60))
    }

    /// Tokens the bucket holds at most at `rate`.
    func capacity(at rate: Double) -> Double { burst.map(Double.init) ?? max(1, rate / 50) }
}

/// Which rate limit each request of a service takes a token from
/// (``ServiceActor/Configuration/Limits-swift.struct/rateLimits``).
public struct RateLimits: Sendable {
    /// What a request's limit is keyed by, unless its query or options name a key of their own
    /// (``ExecutionParameters/rateLimitKey``, ``RequestOptions/rateLimitKey``).
    public enum Scope: Sendable, Hashable {
        /// One limit for every request of the service.
        case service
        /// One per host (`storage.googleapis.com`).
        case host
        /// One per API (`storage`, `tasks`), as Google counts quotas; raw requests fall back to their host.
        case api
    }

    /// The limit of every key without an override.
    public var limit: RateLimit
    public var scope: Scope
    /// Limits of particular keys: API names, hosts, or custom keys.
    public var overrides: [String: RateLimit]

    public init(_ limit: RateLimit, scope: Scope = .api, overrides: [String: RateLimit] = [:]) {
        self.limit = limit
        self.scope = scope
        self.overrides = overrides
    }

    func limit(for key: String) -> RateLimit { overrides[key] ?? limit }
}

/// One rate limit right now (``ServiceActor/rateLimitStatus()``).
public struct RateLimitStatus: Sendable, Hashable {
    public let key: String
    /// The rate requests are released at.
    public let requestsPerSecond: Double
    /// Requests waiting for a token.
    public let queued: Int
    /// Throttled answers seen (each counted; the rate reacts at most once per window).
    public let throttled: Int
}
