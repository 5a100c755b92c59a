extension QueryBatch {
    /// Adds the query `convertible` describes; returns the typed key of its result.
    @discardableResult
    public mutating func add<Convertible: QueryConvertible>(
        _ convertible: Convertible,
        completion: (@Sendable (Result<Convertible.Response, any Error>) async -> Void)? = nil
    ) -> BatchKey<Convertible.Response> {
        add(convertible.makeQuery(), completion: completion)
    }
}

extension ServiceActor {
    /// Runs queries of different types as one task-group batch (``batch(_:)->_``) and returns each
    /// one's result, typed and in order:
    ///
    /// ```swift
    /// let (bucket, objects) = try await service.batch(Storage.Buckets.get(bucket: "photos"),
    ///                                                Storage.Objects.list(bucket: "photos"))
    /// let location = try bucket.get().location                  // Result<GoogleStorage.Bucket, any Error>
    /// ```
    ///
    /// Throws only what the batch as a whole throws (cancellation); each query's failure is its
    /// own `Result`.
    public nonisolated func batch<each Convertible: QueryConvertible>(_ queries: repeat each Convertible)
        async throws -> (repeat Result<(each Convertible).Response, any Error>)
    {
        try await typedBatch(repeat each queries) { try await self.batch($0) }
    }

    /// The typed batch above as Google's multipart wire batch: one request to the API's `batchPath`.
    public nonisolated func executeBatch<each Convertible: QueryConvertible>(_ queries: repeat each Convertible)
        async throws -> (repeat Result<(each Convertible).Response, any Error>)
    {
        try await typedBatch(repeat each queries) { try await self.executeBatch($0) }
    }

    /// One batch of `queries`, run by `run`, its results handed back in the queries' order and types.
    private nonisolated func typedBatch<each Convertible: QueryConvertible>(
        _ queries: repeat each Convertible, run: (QueryBatch) async throws -> BatchResult
    ) async throws -> (repeat Result<(each Convertible).Response, any Error>) {
        var batch = QueryBatch()
        let keys = (repeat batch.add(each queries))
        let results = try await run(batch)
        return (repeat results.result(for: each keys))
    }
}
