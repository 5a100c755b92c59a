/// Queries to run together, each with its own result: with ``ServiceActor/batch(_:)`` as
/// concurrent queries in a task group, or with ``ServiceActor/executeBatch(_:)`` as Google's
/// multipart wire batch in few round trips.
///
/// ```swift
/// var batch = QueryBatch(getNote, listLabels, deleteDraft)   // different response types
/// batch.add(getOther) { result in print("other:", result) }   // runs before the batch returns
/// let results = try await service.batch(batch)
/// let note = try results.value(for: getNote)                  // typed
/// ```
public struct QueryBatch: Sendable {
    var items: [BatchItem] = []
    /// At most this many queries run at once in a task-group batch; nil takes
    /// ``ServiceActor/Configuration/batchConcurrency``.
    public var maxConcurrency: Int?
    /// Cancel the others at the first failure. Off by default: one failure never cancels its siblings.
    public var failFast = false
    /// Names the whole batch for ``ServiceActor/cancel(requestID:)`` and in events.
    public var requestID = RequestID.next()

    public init() {}

    /// A batch of queries whose responses may differ in type.
    public init<each Response: QueryResponse>(_ queries: repeat Query<each Response>) {
        repeat items.append(BatchItem(each queries, completion: nil))
    }

    /// Adds a query; `completion`, if given, runs with its result before the batch returns.
    public mutating func add<Response>(_ query: Query<Response>,
                                       completion: (@Sendable (Result<Response, any Error>) async -> Void)? = nil) {
        items.append(BatchItem(query, completion: completion))
    }

    /// Throws ``BatchError/duplicateRequestID`` when two queries share an ID: their results could
    /// not be told apart.
    func checkUniqueIDs() throws(BatchError) {
        var seen = Set<String>()
        for item in items where !seen.insert(item.requestID).inserted {
            throw BatchError(.duplicateRequestID, message: "request ID \(item.requestID) appears twice in the batch")
        }
    }

    /// The request IDs, in the order the queries were added.
    public var requestIDs: [String] { items.map(\.requestID) }
    public var count: Int { items.count }
}

/// The result of every query of a batch, by request ID.
public struct BatchResult: Sendable {
    /// Each query's outcome, by request ID.
    public let results: [String: Result<any Sendable, any Error>]
    /// The request IDs in the order the queries were added.
    public let requestIDs: [String]

    public var successes: [String: any Sendable] {
        results.compactMapValues { try? $0.get() }
    }

    public var failures: [String: any Error] {
        results.compactMapValues { result in
            if case .failure(let error) = result { return error }
            return nil
        }
    }

    /// The typed result of `query`, nil if it was not in the batch.
    public subscript<Response>(query: Query<Response>) -> Result<Response, any Error>? {
        results[query.requestID].map { result in
            result.flatMap { value in
                guard let typed = value as? Response else {
                    return .failure(QueryError(.unexpectedResponse, message: "the result of \(query.requestID) has another type"))
                }
                return .success(typed)
            }
        }
    }

    /// The typed value of `query`, or its error.
    public func value<Response>(for query: Query<Response>) throws -> Response {
        guard let result = self[query] else {
            throw BatchError(.missingResponse, message: "\(query.requestID) was not in the batch")
        }
        return try result.get()
    }
}
