import Foundation

/// Settings a query can override for itself; `nil` means "use the service's".
public struct ExecutionParameters: Sendable {
    public var retry: RetryPolicy?
    public var paging: PagingPolicy?
    /// Merged over the service's resolver: this query's kinds and surrogates win.
    public var resolver: ObjectResolver?
    /// Answers the query without the network (see `CourierTesting`).
    public var testHandler: TestHandler?
    /// Application data for this execution, visible to the test handler and in events.
    public var properties: [String: any Sendable]
    /// Sends to another root URL (an emulator, a regional endpoint).
    public var rootURL: URL?
    public var timeouts: Timeouts?

    public init(retry: RetryPolicy? = nil, paging: PagingPolicy? = nil, resolver: ObjectResolver? = nil,
                testHandler: TestHandler? = nil, properties: [String: any Sendable] = [:], rootURL: URL? = nil,
                timeouts: Timeouts? = nil) {
        self.retry = retry
        self.paging = paging
        self.resolver = resolver
        self.testHandler = testHandler
        self.properties = properties
        self.rootURL = rootURL
        self.timeouts = timeouts
    }
}

/// Answers a query's HTTP request in place of the network: the rest of the pipeline (URL
/// building, encoding, retry decisions, decoding, paging) runs as usual. GTLR's `testBlock`.
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
