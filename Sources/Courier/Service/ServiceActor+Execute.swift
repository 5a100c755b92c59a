import Foundation

extension ServiceActor {
    /// Executes `query` and returns its typed response.
    ///
    /// The request takes the one pipeline (Docs/Pipeline.md): credentials, limits, the test
    /// handler, retries by Google's rules and idempotency, one credential refresh after a 401,
    /// logging, events and metrics; then the response is decoded, and with
    /// ``PagingPolicy/fetchAll(maxPages:whenLimitReached:)`` `nextPageToken` is followed. A
    /// non-2xx status throws ``APIError``; a body that is not the expected JSON throws
    /// ``QueryError``; a failure below HTTP throws ``TransportError``.
    public nonisolated func execute<Response>(_ query: Query<Response>) async throws -> Response {
        if query.isUpload { return try await executeUpload(query) }
        let execution = QueryExecution(service: self, query: query)
        return try await operation(execution.context) { try await execution.run() }
    }

    /// Out of line: inlined, the upload's locals made `execute`'s frame, alive while a query is in
    /// flight, four times larger for every query.
    @inline(never)
    private nonisolated func executeUpload<Response>(_ query: Query<Response>) async throws -> Response {
        try await upload(query).value
    }

    /// Executes the query `convertible` describes (a generated method struct, or a ``Query``).
    public nonisolated func execute<Convertible: QueryConvertible>(_ convertible: Convertible) async throws -> Convertible.Response {
        try await execute(convertible.makeQuery())
    }

    /// The exact request the pipeline would send for `query`, authorized with the service's
    /// credentials: GTLR's `requestForQuery:`, for callers who send it with another client
    /// (``HTTPRequest/makeURLRequest()`` turns it into a Foundation `URLRequest`). What belongs
    /// to one attempt is not in it: Cloud Storage's invocation headers, a trace's context.
    public nonisolated func request<Response>(for query: Query<Response>) async throws -> HTTPRequest {
        let execution = QueryExecution(service: self, query: query)
        return try await pipeline(execution.context).authorized(execution.prepare(query))
    }
}

/// One execution of one query, from request building to the decoded response.
struct QueryExecution<Response: QueryResponse>: Sendable {
    let service: ServiceActor
    let query: Query<Response>
    /// The service's, read through it: a copy kept here sat in every frame and closure that
    /// holds the execution, for as long as a query is in flight.
    var configuration: ServiceActor.Configuration { service.configuration }
    private(set) var context: RequestContext

    init(service: ServiceActor, query: Query<Response>, operation: RequestContext.Operation = .execute) {
        self.service = service
        self.query = query
        let configuration = service.configuration
        context = RequestContext(requestID: query.requestID, name: query.name, operation: operation,
                                 retry: query.execution.retry ?? configuration.retry,
                                 testHandler: query.execution.testHandler ?? configuration.testing.handler, authorize: true)
        context.api = query.api.name
        context.rateLimitKey = query.execution.rateLimitKey
        if configuration.queries.invocationHeaderAPIs.contains(query.api.name) { context.stampsInvocation = true }
    }

    var paging: PagingPolicy { query.execution.paging ?? configuration.queries.paging }

    func run() async throws -> Response {
        let first = try await fetch(query)
        guard case .fetchAll(let maxPages, let behavior) = paging else { return first }
        if let collection = first as? any APICollection {
            return try await fetchRemainingPages(after: collection, maxPages: maxPages, behavior: behavior) as! Response
        }
        // A page whose items are not one list cannot be merged: refuse rather than return one page
        // of several as if it were all.
        if let page = first as? any APIPage, let token = page.nextPageToken, !token.isEmpty {
            throw QueryError(code: .pagesNotMergeable, message: "\(Response.self) has more pages but no single list of items "
                                 + "to merge them by; iterate service.pages(of:) instead", pagesFetched: 1)
        }
        return first
    }

    /// Follows `nextPageToken`, merging items, up to `maxPages` pages in all.
    private func fetchRemainingPages<Collection: APICollection>(
        after first: Collection, maxPages: Int, behavior: PagingPolicy.LimitBehavior
    ) async throws -> Collection {
        var merged = first
        var token = first.nextPageToken
        var pages = 1
        while let next = token, !next.isEmpty {
            guard pages < maxPages else {
                if behavior == .fail {
                    throw QueryError(code: .pageLimitReached, message: "stopped after \(pages) pages with more remaining",
                                     pagesFetched: pages)
                }
                break
            }
            var pageQuery = query.nextPage(token: next)
            pageQuery.requestID = query.requestID
            service.eventHub.emit(.nextPage(requestID: query.requestID, query: query.name, page: pages + 1))
            let page = try await fetch(pageQuery)
            guard let typedPage = page as? Collection else {
                throw QueryError(code: .unexpectedResponse, message: "a page of \(Collection.self) has another type")
            }
            merged = merged.appending(typedPage)
            token = typedPage.nextPageToken
            pages += 1
        }
        merged.nextPageToken = token
        return merged
    }

    /// One page: the request through the pipeline (and the cache, when the service has one), decoded.
    func fetch(_ query: Query<Response>) async throws -> Response {
        let request = try prepare(query)
        let response = if let cache = service.queryCache { try await perform(request, cache: cache) } else { try await perform(request) }
        if query.downloadsMedia, let mismatch = Checksums.mismatch(ofMedia: response) {
            throw IntegrityError(message: "\(mismatch) (received \(response.body.count) bytes)")
        }
        return try decode(query.api.unwrapped(response))
    }

    // Synchronous steps out of line, so their temporaries (a copy of the configuration among
    // them) live on the thread's stack, not in the frames a query in flight keeps.

    @inline(never)
    private func decode(_ response: HTTPResponse) throws -> Response {
        do {
            return try Response.decode(from: response, limits: configuration.json)
        } catch let error as QueryError {
            throw error
        } catch {
            throw QueryError(code: .unexpectedResponse, message: "\(error)")
        }
    }

    @inline(never)
    func prepare(_ query: Query<Response>) throws -> HTTPRequest {
        try RequestBuilder.build(query, configuration: configuration)
    }

    /// A GET through the ETag cache and the coalescer; a write drops what it makes stale.
    private func perform(_ request: HTTPRequest, cache: QueryCache) async throws -> HTTPResponse {
        guard request.method == .get else {
            defer { cache.invalidate(after: request) }
            return try await perform(request)
        }
        let response = try await cache.get(request, cached: query.execution.cached, coalesced: query.execution.coalesced) {
            [self] request, conditional in
            try await perform(request) { context in
                if conditional { context.accepts = { (200..<300).contains($0) || $0 == 304 } }
            }
        }
        // A caller that shared another's request saw no status of its own: the shared one is its.
        if context.attempts.lastStatus == nil { context.attempts.record(status: response.status) }
        return response
    }

    /// `request` through the pipeline with this query's context; `configure` adjusts the context
    /// (an upload's chunk takes 308 as an answer and leaves retrying to the upload protocol).
    func perform(_ request: HTTPRequest, configure: (inout RequestContext) -> Void = { _ in }) async throws -> HTTPResponse {
        var context = context
        configure(&context)
        return try await service.pipeline(context).run(BufferedTransmission()) { request }
    }
}
