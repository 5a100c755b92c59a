import Foundation

extension ServiceActor {
    /// Sends the queries of `batch` as Google's `multipart/mixed` wire batch: one HTTP request
    /// per ``Configuration/Limits-swift.struct/maxBatchSize`` queries (to each API's `batchPath`), one result per query.
    ///
    /// - A query the server answered with an error status gets an ``APIError``; one whose part
    ///   is missing or unreadable gets a ``BatchError``; media queries are refused
    ///   (``BatchError/notAllowed``) — uploads and downloads do not travel in batches.
    /// - Each batch request takes the one pipeline (credentials, limits, the test handler,
    ///   retries, logs, events, metrics); it is idempotent, and so retried after it may have
    ///   arrived, only when all of its parts are.
    /// - Parts answered with a transient status (429, 503, … inside a 200 batch) are sent again in
    ///   a follow-up batch after a jittered wait, by each query's own retry policy and idempotency.
    /// - When the batch, or some of its parts, come back 401, the authorizer refreshes its
    ///   credentials and those are sent again, once.
    /// - Queries whose paging is ``PagingPolicy/fetchAll(maxPages:whenLimitReached:)`` follow their
    ///   pages in further batches.
    /// - A part of an API that sends Cloud Storage's invocation headers
    ///   (``Configuration/Queries-swift.struct/invocationHeaderAPIs``) carries them in the part, as
    ///   Google's Python Storage library stamps each part of its batches: one ID for the part across
    ///   every batch request that carries it, the attempt counted per request. The batch request
    ///   itself carries none.
    /// - A failure of the batch request itself (after retries) fails each of its queries.
    /// - ``cancel(requestID:)`` with the batch's ``QueryBatch/requestID`` cancels it; a query's own
    ///   ID cannot take it out of a request already on the wire.
    ///
    /// Throws only `CancellationError` (and ``BatchError/duplicateRequestID`` for ambiguous input).
    public nonisolated func executeBatch(_ batch: QueryBatch) async throws -> BatchResult {
        try batch.checkUniqueIDs()
        let context = RequestContext(requestID: batch.requestID, name: "batch", operation: .batch, retry: configuration.retry,
                                     testHandler: configuration.testing.handler, authorize: true)
        return try await operation(context) { [self] in try await executeWireBatch(batch, context: context) }
    }

    private nonisolated func executeWireBatch(_ batch: QueryBatch, context: RequestContext) async throws -> BatchResult {
        var results: [String: Result<any Sendable, any Error>] = [:]
        var eligible: [BatchItem] = []
        for item in batch.items {
            if item.isMedia {
                results[item.requestID] = .failure(BatchError(code: .notAllowed, message: "\(item.name): media uploads and downloads cannot be sent in a wire batch"))
            } else {
                eligible.append(item)
            }
        }
        for (id, result) in try await sendInWireBatches(eligible, context: context) { results[id] = result }
        try await followPages(of: eligible, results: &results, context: context)
        for item in batch.items {
            if let complete = item.complete, let result = results[item.requestID] { await complete(result) }
        }
        return BatchResult(results: results, requestIDs: batch.requestIDs)
    }

    /// Groups items by batch endpoint, splits them into chunks and sends the chunks concurrently.
    private nonisolated func sendInWireBatches(_ items: [BatchItem], context: RequestContext) async throws
        -> [String: Result<any Sendable, any Error>]
    {
        let size = min(max(1, configuration.limits.maxBatchSize), 1000)
        var chunks: [[BatchItem]] = []
        for group in Dictionary(grouping: items, by: { endpoint(for: $0.api) }).values.sorted(by: { $0[0].requestID < $1[0].requestID }) {
            for start in stride(from: 0, to: group.count, by: size) {
                chunks.append(Array(group[start..<min(start + size, group.count)]))
            }
        }
        let limit = max(1, configuration.limits.batchConcurrency)
        return try await withThrowingTaskGroup(of: [String: Result<any Sendable, any Error>].self) { group in
            var pending = chunks[...]
            for _ in 0..<limit {
                guard let chunk = pending.popFirst() else { break }
                group.addTask { try await self.sendWireBatch(chunk, context: context) }
            }
            var results: [String: Result<any Sendable, any Error>] = [:]
            while let chunkResults = try await group.next() {
                results.merge(chunkResults) { _, new in new }
                if let chunk = pending.popFirst() { group.addTask { try await self.sendWireBatch(chunk, context: context) } }
            }
            return results
        }
    }

    private nonisolated func endpoint(for api: APIDescription) -> URL {
        var root = (configuration.queries.rootURL ?? configuration.root(of: api)).absoluteString
        if !root.hasSuffix("/") { root += "/" }
        return URL(string: root + api.batchPath) ?? api.rootURL
    }

    /// A query of a wire batch on its way: its part's request, its own retry budget and, for an
    /// API that sends them, its invocation headers (nil for one that does not).
    private struct PendingPart {
        let item: BatchItem
        let request: HTTPRequest
        var retry: RequestPipeline.AttemptState
        var invocation: InvocationHeaders?

        /// The part as the next batch request carries it: each request that carries it is one
        /// attempt of the part.
        mutating func nextAttempt() -> HTTPRequest {
            invocation?.stamp(request) ?? request
        }
    }

    /// The parts of `items` in batch requests through the pipeline, until each has a final
    /// result: transient parts go again in follow-up batches, 401 parts once after a refresh.
    private nonisolated func sendWireBatch(_ items: [BatchItem], context: RequestContext) async throws
        -> [String: Result<any Sendable, any Error>]
    {
        var results: [String: Result<any Sendable, any Error>] = [:]
        var pending: [PendingPart] = []
        let started = MonotonicClock.nanoseconds() // each part's deadline counts from the batch's start
        for item in items {
            do {
                let request = try item.makeRequest(configuration)
                let stamps = configuration.queries.invocationHeaderAPIs.contains(item.api.name)
                pending.append(PendingPart(item: item, request: request,
                                           retry: RequestPipeline.AttemptState(policy: item.retry, started: started),
                                           invocation: stamps ? InvocationHeaders(for: request) : nil))
            } catch {
                results[item.requestID] = .failure(error)
            }
        }
        guard let url = items.first.map({ endpoint(for: $0.api) }) else { return results }
        let pipeline = pipeline(context)
        var refreshedParts = false
        while !pending.isEmpty {
            // Made for each attempt of the batch request: its parts' invocation headers count it.
            var request = HTTPRequest(url: url)
            let response: HTTPResponse
            do {
                response = try await pipeline.run(BufferedTransmission()) {
                    request = Self.batchRequest(for: &pending, url: url)
                    return request
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                for part in pending { results[part.item.requestID] = .failure(error) }
                return results
            }
            var again: [PendingPart] = []
            var wait = Duration.zero
            var unauthorized = false
            for (index, (item, result)) in readParts(of: response, for: pending).enumerated() {
                var part = pending[index]
                if case .failure(let error as APIError) = result {
                    if error.status == 401, configuration.auth.authorizer != nil, !refreshedParts {
                        unauthorized = true
                        again.append(part)
                        continue
                    }
                    let outcome = RetryStateMachine.Outcome.response(
                        status: error.status, retryAfter: RetryAfter.parse(error.headers["Retry-After"]),
                        reasons: error.items.compactMap(\.reason))
                    if let delay = pipeline.decide(outcome, idempotent: part.request.isIdempotent, state: &part.retry) {
                        wait = max(wait, delay)
                        again.append(part)
                        continue
                    }
                }
                results[item.requestID] = result
            }
            if unauthorized, let authorizer = configuration.auth.authorizer {
                refreshedParts = true
                await authorizer.invalidate(request) // carries no token of its own: the current one is dropped
            }
            if wait > .zero {
                try await pipeline.wait(wait, attempt: again.map(\.retry.retries).max() ?? 1,
                                        reason: "\(again.count) parts answered a transient status", status: nil)
            }
            pending = again
        }
        return results
    }

    /// One `multipart/mixed` request for `parts`: idempotent only when every part is, and with
    /// the longest timeouts any of its queries asked for.
    private static func batchRequest(for parts: inout [PendingPart], url: URL) -> HTTPRequest {
        let boundary = BatchRequestEncoder.makeBoundary()
        let attempts = parts.indices.map { (parts[$0].item.requestID, parts[$0].nextAttempt()) }
        var request = HTTPRequest(method: .post, url: url, headers: [
            "Content-Type": "multipart/mixed; boundary=\(boundary)", "Accept": "multipart/mixed",
        ], body: .data(BatchRequestEncoder.encode(attempts, boundary: boundary)))
        request.idempotency = parts.allSatisfy(\.request.isIdempotent) ? .always : .never
        for part in parts {
            let timeouts = part.request.timeouts
            request.timeouts = Timeouts(connect: [request.timeouts.connect, timeouts.connect].compactMap { $0 }.max(),
                                        total: [request.timeouts.total, timeouts.total].compactMap { $0 }.max(),
                                        idle: [request.timeouts.idle, timeouts.idle].compactMap { $0 }.max())
        }
        return request
    }

    /// Matches each part to its query by Content-ID and decodes it.
    private nonisolated func readParts(of response: HTTPResponse, for pending: [PendingPart])
        -> [(BatchItem, Result<any Sendable, any Error>)]
    {
        let parsed: (parts: [MultipartPart], complete: Bool)
        do {
            let boundary = try MultipartParser.boundary(fromContentType: response.headers["Content-Type"] ?? "")
            parsed = try MultipartParser.parse(response.body, boundary: boundary)
        } catch {
            return pending.map { ($0.item, .failure(BatchError(code: .malformedResponse, message: "the batch response cannot be read: \(error)"))) }
        }
        var byID: [String: MultipartPart] = [:]
        for part in parsed.parts {
            guard var id = part.header("Content-ID")?.trimmingCharacters(in: .whitespaces) else { continue }
            if id.hasPrefix("<"), id.hasSuffix(">") { id = String(id.dropFirst().dropLast()) }
            if id.hasPrefix("response-") { id = String(id.dropFirst("response-".count)) }
            byID[id] = part
        }
        return pending.map { part -> (BatchItem, Result<any Sendable, any Error>) in
            let (item, request) = (part.item, part.request)
            guard let part = byID[item.requestID] else {
                let reason = parsed.complete ? "the batch response has no part for it" : "the batch response was cut off before its part"
                return (item, .failure(BatchError(code: .missingResponse, message: "\(item.requestID): \(reason)")))
            }
            do {
                let inner = try MultipartParser.httpResponse(part.body)
                let answer = HTTPResponse(status: inner.status, headers: HTTPHeaders(inner.headers.map { ($0.name, $0.value) }),
                                          body: inner.body, url: request.url)
                guard (200..<300).contains(answer.status) else {
                    return (item, .failure(APIError(response: answer, requestID: item.requestID)))
                }
                return (item, .success(try item.decode(answer, configuration.json)))
            } catch let error as MultipartError {
                return (item, .failure(BatchError(code: .malformedResponse, message: "\(item.requestID): \(error)")))
            } catch {
                return (item, .failure(error))
            }
        }
    }

    /// Follows `nextPageToken` for collection queries that fetch all pages, a batch per round.
    private nonisolated func followPages(of items: [BatchItem], results: inout [String: Result<any Sendable, any Error>],
                                         context: RequestContext) async throws {
        struct Paging { let item: BatchItem; var value: any Sendable; var pages: Int; let maxPages: Int; let behavior: PagingPolicy.LimitBehavior }
        var active: [String: Paging] = [:]
        for item in items {
            guard case .fetchAll(let maxPages, let behavior) = item.paging ?? configuration.queries.paging,
                  case .success(let value)? = results[item.requestID] else { continue }
            active[item.requestID] = Paging(item: item, value: value, pages: 1, maxPages: maxPages, behavior: behavior)
        }
        while !active.isEmpty {
            var round: [BatchItem] = []
            var owner: [String: String] = [:]
            for (id, state) in active {
                guard let next = state.item.nextPage(state.value) else {
                    active[id] = nil
                    continue
                }
                guard state.pages < state.maxPages else {
                    if state.behavior == .fail {
                        results[id] = .failure(QueryError(code: .pageLimitReached, message: "stopped after \(state.pages) pages",
                                                          pagesFetched: state.pages))
                    }
                    active[id] = nil
                    continue
                }
                round.append(next)
                owner[next.requestID] = id
            }
            guard !round.isEmpty else { break }
            for (pageID, result) in try await sendInWireBatches(round, context: context) {
                guard let id = owner[pageID], var state = active[id] else { continue }
                switch result {
                case .success(let page):
                    state.value = state.item.merge(state.value, page)
                    state.pages += 1
                    results[id] = .success(state.value)
                    active[id] = state
                case .failure(let error):
                    results[id] = .failure(error)
                    active[id] = nil
                }
            }
        }
    }
}
