import Foundation

extension ServiceActor {
    /// Executes `query` and returns its typed response.
    ///
    /// The pipeline: build the URL and body, authorize, send (or ask the test handler), retry
    /// what the retry policy allows on the service's clock, refresh credentials once after a 401,
    /// decode, and with ``PagingPolicy/fetchAll(maxPages:whenLimitReached:)`` follow
    /// `nextPageToken`. A non-2xx status throws ``APIError``; a body that is not the expected
    /// JSON throws ``QueryError``; a failure below HTTP throws ``TransportError``.
    public nonisolated func execute<Response>(_ query: Query<Response>) async throws -> Response {
        if query.isUpload { return try await upload(query).value }
        let execution = QueryExecution(service: self, query: query)
        return try await execution.run()
    }
}

/// One execution of one query, from request building to the decoded response.
struct QueryExecution<Response: QueryResponse>: Sendable {
    let service: ServiceActor
    let query: Query<Response>
    let configuration: ServiceActor.Configuration

    init(service: ServiceActor, query: Query<Response>) {
        self.service = service
        self.query = query
        configuration = service.configuration
    }

    var retryPolicy: RetryPolicy { query.execution.retry ?? configuration.retry }
    var paging: PagingPolicy { query.execution.paging ?? configuration.paging }
    var testHandler: TestHandler? { query.execution.testHandler ?? configuration.testHandler }

    func run() async throws -> Response {
        let requestID = query.requestID
        let clock = ContinuousClock()
        let started = clock.now
        service.requests.begin(requestID)
        defer { service.requests.end(requestID) }
        service.eventHub.emit(.started(requestID: requestID, query: query.name))
        var lastStatus: Int?
        do {
            let (first, status) = try await fetch(query)
            lastStatus = status
            var result = first
            if case .fetchAll(let maxPages, let behavior) = paging, let collection = first as? any APICollection {
                result = try await fetchRemainingPages(after: collection, maxPages: maxPages, behavior: behavior) as! Response
            }
            finish(started: started, clock: clock, status: lastStatus, error: nil)
            return result
        } catch {
            if let apiError = error as? APIError { lastStatus = apiError.status }
            finish(started: started, clock: clock, status: lastStatus, error: error)
            throw error
        }
    }

    private func finish(started: ContinuousClock.Instant, clock: ContinuousClock, status: Int?, error: (any Error)?) {
        let duration = clock.now - started
        service.eventHub.emit(.finished(requestID: query.requestID, query: query.name, status: status,
                                        duration: duration, error: error.map { "\($0)" }))
        QueryMetrics.record(method: query.name, status: status, failed: error != nil, duration: duration)
    }

    /// Follows `nextPageToken`, merging items, up to `maxPages` pages in all.
    private func fetchRemainingPages<Collection: APICollection>(
        after first: Collection, maxPages: Int, behavior: PagingPolicy.LimitBehavior
    ) async throws -> Collection {
        var merged = first
        var items = first.json[Collection.itemsKey]?.arrayValue ?? []
        var token = first.nextPageToken
        var pages = 1
        while let next = token, !next.isEmpty {
            guard pages < maxPages else {
                if behavior == .fail {
                    throw QueryError(.pageLimitReached, message: "stopped after \(pages) pages with more remaining",
                                     pagesFetched: pages)
                }
                break
            }
            var pageQuery = query.nextPage(token: next)
            pageQuery.requestID = query.requestID
            service.eventHub.emit(.nextPage(requestID: query.requestID, query: query.name, page: pages + 1))
            let (page, _) = try await fetch(pageQuery)
            guard let typedPage = page as? Collection else {
                throw QueryError(.unexpectedResponse, message: "a page of \(Collection.self) has another type")
            }
            items += typedPage.json[Collection.itemsKey]?.arrayValue ?? []
            token = typedPage.nextPageToken
            pages += 1
        }
        merged.json[Collection.itemsKey] = .array(items)
        merged.nextPageToken = token
        return merged
    }

    /// One page: the request with retries and one credential refresh, decoded.
    func fetch(_ query: Query<Response>) async throws -> (Response, Int) {
        let response = try await perform(query)
        do {
            return (try Response.decode(from: response, limits: configuration.jsonLimits), response.status)
        } catch let error as QueryError {
            throw error
        } catch {
            throw QueryError(.unexpectedResponse, message: "\(error)")
        }
    }

    /// Sends until a 2xx arrives or the retry policy gives up; a final non-2xx throws ``APIError``.
    func perform(_ query: Query<Response>) async throws -> HTTPResponse {
        try await perform(prepared: RequestBuilder.build(query, configuration: configuration), retryPolicy: retryPolicy)
    }

    /// Sends `unsigned` (authorized here, refreshed once after a 401) until a status `accepting`
    /// allows arrives or the retry policy gives up; a final other status throws ``APIError``.
    func perform(prepared unsigned: HTTPRequest, retryPolicy: RetryPolicy,
                 accepting: (Int) -> Bool = { (200..<300).contains($0) }) async throws -> HTTPResponse {
        var request = try await authorized(unsigned)
        var retry = RetryStateMachine(policy: retryPolicy, queryName: query.name, replayable: unsigned.body.isReplayable)
        var refreshedCredentials = false
        while true {
            if service.requests.isCancelled(query.requestID) || Task.isCancelled { throw CancellationError() }
            let outcome: RetryStateMachine.Outcome
            let failure: any Error
            do {
                let response = try await send(request)
                if accepting(response.status) { return response }
                if response.status == 401, let authorizer = configuration.authorizer, !refreshedCredentials {
                    refreshedCredentials = true
                    configuration.logger.debug("credentials refused; refreshing them once", metadata: [
                        "query": "\(query.name)", "request-id": "\(query.requestID)",
                    ])
                    await authorizer.invalidate(request)
                    request = try await authorized(unsigned)
                    continue
                }
                outcome = .response(status: response.status, retryAfter: RetryAfter.parse(response.headers["Retry-After"]))
                failure = APIError(response: response, requestID: query.requestID)
            } catch let error as TransportError {
                outcome = .transportFailure(error)
                failure = error
            }
            guard case .retry(let delay) = retry.decide(outcome) else { throw failure }
            configuration.logger.debug("retrying", metadata: [
                "query": "\(query.name)", "request-id": "\(query.requestID)", "attempt": "\(retry.retries)",
                "delay": "\(delay)", "reason": "\(failure)",
            ])
            service.eventHub.emit(.retrying(requestID: query.requestID, query: query.name, attempt: retry.retries,
                                            delay: delay, reason: "\(failure)"))
            try await service.requests.sleep(query.requestID, for: delay, on: configuration.clock)
        }
    }

    private func authorized(_ request: HTTPRequest) async throws -> HTTPRequest {
        guard let authorizer = configuration.authorizer else { return request }
        var signed = request
        try await authorizer.authorize(&signed)
        return signed
    }

    /// The network, or the test handler in its place; logged when HTTP logging is on.
    private func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let started = ContinuousClock.now
        do {
            let response = try await service.limited {
                if let testHandler {
                    try request.validate()
                    return try await testHandler(request)
                }
                return try await service.send(request, requestID: query.requestID)
            }
            service.trafficLog?.record(name: query.name, requestID: query.requestID, request: request,
                                       response: response, error: nil, duration: ContinuousClock.now - started)
            return response
        } catch {
            service.trafficLog?.record(name: query.name, requestID: query.requestID, request: request,
                                       response: nil, error: error, duration: ContinuousClock.now - started)
            throw error
        }
    }
}

extension ServiceActor {
    /// Runs one attempt holding a slot of the service-wide limiter, if there is one; a query
    /// waiting to retry holds no slot.
    nonisolated func limited<T>(_ body: () async throws -> T) async throws -> T {
        guard let limiter else { return try await body() }
        return try await limiter.withSlot(body)
    }
}
