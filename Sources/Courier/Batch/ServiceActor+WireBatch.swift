import Foundation

extension ServiceActor {
    /// Sends the queries of `batch` as Google's `multipart/mixed` wire batch: one HTTP request
    /// per ``Configuration/maxBatchSize`` queries (to each API's `batchPath`), one result per query.
    ///
    /// - A query the server answered with an error status gets an ``APIError``; one whose part
    ///   is missing or unreadable gets a ``BatchError``; media queries are refused
    ///   (``BatchError/notAllowed``) — uploads and downloads do not travel in batches.
    /// - The batch request is authorized once; when it, or some of its parts, come back 401,
    ///   the authorizer refreshes its credentials and those are sent again, once.
    /// - Queries whose paging is ``PagingPolicy/fetchAll(maxPages:whenLimitReached:)`` follow their
    ///   pages in further batches.
    /// - A failure of the batch request itself (after retries) fails each of its queries.
    ///
    /// Throws only `CancellationError` (and ``BatchError/duplicateRequestID`` for ambiguous input).
    public nonisolated func executeBatch(_ batch: QueryBatch) async throws -> BatchResult {
        var results: [String: Result<any Sendable, any Error>] = [:]
        var seen = Set<String>()
        var eligible: [BatchItem] = []
        for item in batch.items {
            guard seen.insert(item.requestID).inserted else {
                throw BatchError(.duplicateRequestID, message: "request ID \(item.requestID) appears twice")
            }
            if item.isMedia {
                results[item.requestID] = .failure(BatchError(.notAllowed, message: "\(item.name): media uploads and downloads cannot be sent in a wire batch"))
            } else {
                eligible.append(item)
            }
        }
        for (id, result) in try await sendInWireBatches(eligible) { results[id] = result }
        try await followPages(of: eligible, results: &results)
        for item in batch.items {
            if let complete = item.complete, let result = results[item.requestID] { await complete(result) }
        }
        return BatchResult(results: results, requestIDs: batch.requestIDs)
    }

    /// Groups items by batch endpoint, splits them into chunks and sends the chunks concurrently.
    private nonisolated func sendInWireBatches(_ items: [BatchItem]) async throws -> [String: Result<any Sendable, any Error>] {
        let size = min(max(1, configuration.maxBatchSize), 1000)
        var chunks: [[BatchItem]] = []
        for group in Dictionary(grouping: items, by: { endpoint(for: $0.api) }).values.sorted(by: { $0[0].requestID < $1[0].requestID }) {
            for start in stride(from: 0, to: group.count, by: size) {
                chunks.append(Array(group[start..<min(start + size, group.count)]))
            }
        }
        let limit = max(1, configuration.batchConcurrency)
        return try await withThrowingTaskGroup(of: [String: Result<any Sendable, any Error>].self) { group in
            var pending = chunks[...]
            for _ in 0..<limit {
                guard let chunk = pending.popFirst() else { break }
                group.addTask { try await self.sendWireBatch(chunk) }
            }
            var results: [String: Result<any Sendable, any Error>] = [:]
            while let chunkResults = try await group.next() {
                results.merge(chunkResults) { _, new in new }
                if let chunk = pending.popFirst() { group.addTask { try await self.sendWireBatch(chunk) } }
            }
            return results
        }
    }

    private nonisolated func endpoint(for api: APIDescription) -> URL {
        var root = (configuration.rootURL ?? api.rootURL).absoluteString
        if !root.hasSuffix("/") { root += "/" }
        return URL(string: root + api.batchPath) ?? api.rootURL
    }

    /// One batch request: the parts of `items`, then one re-send of the parts that came back 401.
    private nonisolated func sendWireBatch(_ items: [BatchItem]) async throws -> [String: Result<any Sendable, any Error>] {
        var results: [String: Result<any Sendable, any Error>] = [:]
        var pending: [(item: BatchItem, request: HTTPRequest)] = []
        for item in items {
            do { pending.append((item, try item.makeRequest(configuration))) } catch { results[item.requestID] = .failure(error) }
        }
        guard let url = items.first.map({ endpoint(for: $0.api) }) else { return results }
        var refreshed = false
        while !pending.isEmpty {
            let boundary = BatchRequestEncoder.makeBoundary()
            var request = HTTPRequest(method: .post, url: url, headers: [
                "Content-Type": "multipart/mixed; boundary=\(boundary)", "Accept": "multipart/mixed",
            ], body: .data(BatchRequestEncoder.encode(pending.map { ($0.item.requestID, $0.request) }, boundary: boundary)))
            if let authorizer = configuration.authorizer {
                do { try await authorizer.authorize(&request) } catch {
                    for (item, _) in pending { results[item.requestID] = .failure(error) }
                    return results
                }
            }
            let response: HTTPResponse
            do {
                response = try await sendBatchRequest(request)
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as APIError where error.status == 401 && !refreshed {
                // The batch request's own credentials were refused (an expired token): refresh once.
                guard let authorizer = configuration.authorizer else {
                    for (item, _) in pending { results[item.requestID] = .failure(error) }
                    return results
                }
                refreshed = true
                await authorizer.invalidate(request)
                continue
            } catch {
                for (item, _) in pending { results[item.requestID] = .failure(error) }
                return results
            }
            var unauthorized: [(item: BatchItem, request: HTTPRequest)] = []
            for (item, result) in readParts(of: response, for: pending) {
                if case .failure(let error as APIError) = result, error.status == 401, configuration.authorizer != nil, !refreshed {
                    unauthorized.append(pending.first { $0.item.requestID == item.requestID }!)
                } else {
                    results[item.requestID] = result
                }
            }
            guard !unauthorized.isEmpty, let authorizer = configuration.authorizer else { break }
            refreshed = true
            await authorizer.invalidate(request)
            pending = unauthorized
        }
        return results
    }

    /// Sends the batch request itself, retried as the retry policy allows; a non-2xx after the
    /// retries throws ``APIError``.
    private nonisolated func sendBatchRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
        var retry = RetryStateMachine(policy: configuration.retry, queryName: "batch", replayable: true)
        while true {
            try Task.checkCancellation()
            let outcome: RetryStateMachine.Outcome
            let failure: any Error
            do {
                let started = ContinuousClock.now
                let response = try await limited { try await self.send(request) }
                trafficLog?.record(name: "batch", requestID: "batch", request: request, response: response, error: nil,
                                   duration: ContinuousClock.now - started)
                if (200..<300).contains(response.status) { return response }
                outcome = .response(status: response.status, retryAfter: RetryAfter.parse(response.headers["Retry-After"]))
                failure = APIError(response: response)
            } catch let error as TransportError {
                outcome = .transportFailure(error)
                failure = error
            }
            guard case .retry(let delay) = retry.decide(outcome) else { throw failure }
            try await configuration.clock.sleep(for: delay)
        }
    }

    /// Matches each part to its query by Content-ID and decodes it.
    private nonisolated func readParts(of response: HTTPResponse, for pending: [(item: BatchItem, request: HTTPRequest)])
        -> [(BatchItem, Result<any Sendable, any Error>)]
    {
        let parsed: (parts: [MultipartPart], complete: Bool)
        do {
            let boundary = try MultipartParser.boundary(fromContentType: response.headers["Content-Type"] ?? "")
            parsed = try MultipartParser.parse(response.body, boundary: boundary)
        } catch {
            return pending.map { ($0.item, .failure(BatchError(.malformedResponse, message: "the batch response cannot be read: \(error)"))) }
        }
        var byID: [String: MultipartPart] = [:]
        for part in parsed.parts {
            guard var id = part.header("Content-ID")?.trimmingCharacters(in: .whitespaces) else { continue }
            if id.hasPrefix("<"), id.hasSuffix(">") { id = String(id.dropFirst().dropLast()) }
            if id.hasPrefix("response-") { id = String(id.dropFirst("response-".count)) }
            byID[id] = part
        }
        return pending.map { item, request -> (BatchItem, Result<any Sendable, any Error>) in
            guard let part = byID[item.requestID] else {
                let reason = parsed.complete ? "the batch response has no part for it" : "the batch response was cut off before its part"
                return (item, .failure(BatchError(.missingResponse, message: "\(item.requestID): \(reason)")))
            }
            do {
                let inner = try MultipartParser.httpResponse(part.body)
                let answer = HTTPResponse(status: inner.status, headers: HTTPHeaders(inner.headers.map { ($0.name, $0.value) }),
                                          body: inner.body, url: request.url)
                guard (200..<300).contains(answer.status) else {
                    return (item, .failure(APIError(response: answer, requestID: item.requestID)))
                }
                return (item, .success(try item.decode(answer, configuration.jsonLimits)))
            } catch let error as MultipartError {
                return (item, .failure(BatchError(.malformedResponse, message: "\(item.requestID): \(error)")))
            } catch {
                return (item, .failure(error))
            }
        }
    }

    /// Follows `nextPageToken` for collection queries that fetch all pages, a batch per round.
    private nonisolated func followPages(of items: [BatchItem], results: inout [String: Result<any Sendable, any Error>]) async throws {
        struct Paging { let item: BatchItem; var value: any Sendable; var pages: Int; let maxPages: Int; let behavior: PagingPolicy.LimitBehavior }
        var active: [String: Paging] = [:]
        for item in items {
            guard case .fetchAll(let maxPages, let behavior) = item.paging ?? configuration.paging,
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
                        results[id] = .failure(QueryError(.pageLimitReached, message: "stopped after \(state.pages) pages",
                                                          pagesFetched: state.pages))
                    }
                    active[id] = nil
                    continue
                }
                round.append(next)
                owner[next.requestID] = id
            }
            guard !round.isEmpty else { break }
            for (pageID, result) in try await sendInWireBatches(round) {
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
