import Foundation

/// Settings a query can override for itself; `nil` means "use the service's".
public struct ExecutionParameters: Sendable {
    public var retry: RetryPolicy?
    public var paging: PagingPolicy?
    /// Answers the query without the network (see `CourierTesting`).
    public var testHandler: TestHandler?
    /// Sends to another root URL (an emulator, a regional endpoint).
    public var rootURL: URL?
    public var timeouts: Timeouts?
    /// Whether the query may be re-sent after it may have reached the server (see ``Idempotency``):
    /// `.always` for a POST that is safe to repeat, `.never` to forbid re-sending even a GET.
    public var idempotency: Idempotency
    /// The rate limit this query's requests take tokens from (``RateLimits``); nil: by the
    /// service's scope.
    public var rateLimitKey: String?
    /// With the service's ``ServiceActor/Configuration/Queries-swift.struct/caching``: whether this GET revalidates
    /// and keeps its answer in the ETag cache.
    public var cached = true
    /// With the service's ``ServiceActor/Configuration/Queries-swift.struct/caching``: whether this GET may share
    /// an identical one's request in flight.
    public var coalesced = true

    public init(retry: RetryPolicy? = nil, paging: PagingPolicy? = nil, testHandler: TestHandler? = nil, rootURL: URL? = nil,
                timeouts: Timeouts? = nil, idempotency: Idempotency = .automatic) {
        self.retry = retry
        self.paging = paging
        self.testHandler = testHandler
        self.rootURL = rootURL
        self.timeouts = timeouts
        self.idempotency = idempotency
    }
}

/// Answers a request in place of the network: the rest of the pipeline (URL building, encoding,
/// credentials, limits, retry decisions, logging, events, metrics, decoding, paging) runs as
/// usual. GTLR's `testBlock`.
public typealias TestHandler = @Sendable (HTTPRequest) async throws -> HTTPResponse

/// Whether executing a collection query fetches one page or all of them.
public enum PagingPolicy: Sendable, Hashable {
    /// What to do when ``fetchAll(maxPages:whenLimitReached:)`` reaches its limit with pages left.
    public enum LimitBehavior: Sendable, Hashable {
        /// Return the items fetched so far; `nextPageToken` stays set so you can continue.
        case returnPartial
        /// Throw ``QueryError/pageLimitReached``.
        case fail
    }

    /// One page per execution: the default. Use `service.pages(of:)` or `service.items(of:)` to walk on.
    case single
    /// Follow `nextPageToken` and merge the items of up to `maxPages` pages into one response
    /// (GTLR's `shouldFetchNextPages`, whose limit is 25).
    case fetchAll(maxPages: Int = 25, whenLimitReached: LimitBehavior = .returnPartial)

    public static let fetchAll = PagingPolicy.fetchAll()
}
