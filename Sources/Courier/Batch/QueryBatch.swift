/// Queries to run together, each with its own result: with ``ServiceActor/batch(_:)->_`` as
/// concurrent queries in a task group, or with ``ServiceActor/executeBatch(_:)->_`` as Google's
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
    /// ``ServiceActor/Configuration/Limits-swift.struct/batchConcurrency``.
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
    /// Returns the typed key of its result.
    @discardableResult
    public mutating func add<Response>(_ query: Query<Response>,
                                       completion: (@Sendable (Result<Response, any Error>) async -> Void)? = nil)
        -> BatchKey<Response>
    {
        items.append(BatchItem(query, completion: completion))
        return BatchKey(requestID: query.requestID)
    }

    /// Throws ``BatchError/duplicateRequestID`` when two queries share an ID: their results could
    /// not be told apart.
    func checkUniqueIDs() throws(BatchError) {
        var seen = Set<String>()
        for item in items where !seen.insert(item.requestID).inserted {
            throw BatchError(code: .duplicateRequestID, message: "request ID \(item.requestID) appears twice in the batch")
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

    /// The typed result of the query `key` names, nil if it was not in the batch.
    public subscript<Response>(key: BatchKey<Response>) -> Result<Response, any Error>? {
        results[key.requestID].map { result in
            result.flatMap { value in
                guard let typed = value as? Response else {
                    return .failure(QueryError(code: .unexpectedResponse, message: "the result of \(key.requestID) has another type"))
                }
                return .success(typed)
            }
        }
    }

    /// The typed result of `query`, nil if it was not in the batch.
    public subscript<Response>(query: Query<Response>) -> Result<Response, any Error>? {
        self[BatchKey(query)]
    }

    /// The typed value of the query `key` names, or its error.
    public func value<Response>(for key: BatchKey<Response>) throws -> Response {
        try result(for: key).get()
    }

    /// The typed value of `query`, or its error.
    public func value<Response>(for query: Query<Response>) throws -> Response {
        try value(for: BatchKey(query))
    }

    /// The result of the query `key` names; ``BatchError/missingResponse`` if it was not in the batch.
    func result<Response>(for key: BatchKey<Response>) -> Result<Response, any Error> {
        self[key] ?? .failure(BatchError(code: .missingResponse, message: "\(key.requestID) was not in the batch"))
    }
}

/// Names one query of a batch with its response type: what ``QueryBatch/add(_:completion:)->BatchKey<Response>``
/// returns, and how ``BatchResult`` hands back a typed result for generated queries, whose request
/// ID is fresh on every `makeQuery()`.
///
/// ```swift
/// var batch = QueryBatch()
/// let bucket = batch.add(Storage.Buckets.get(bucket: "photos"))      // BatchKey<GoogleStorage.Bucket>
/// let objects = batch.add(Storage.Objects.list(bucket: "photos"))    // BatchKey<GoogleStorage.Objects>
/// let results = try await service.batch(batch)
/// print(try results.value(for: bucket).location ?? "", try results.value(for: objects).count)
/// ```
public struct BatchKey<Response: QueryResponse>: Sendable, Hashable {
    /// The request ID of the query; keys ``BatchResult/results``.
    public let requestID: String

    public init(requestID: String) {
        self.requestID = requestID
    }

    public init(_ query: Query<Response>) {
        self.requestID = query.requestID
    }
}
