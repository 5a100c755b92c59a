extension ServiceActor {
    /// Runs the queries of `batch` as concurrent queries in a task group (at most
    /// ``QueryBatch/maxConcurrency`` at once) and returns every result, successes and failures.
    ///
    /// Completion handlers run before it returns. One failure never cancels the others unless
    /// ``QueryBatch/failFast`` is set. Cancelling the calling task cancels every query and throws
    /// `CancellationError`; so does ``cancel(requestID:)`` with the batch's ``QueryBatch/requestID``
    /// (each query's own ID cancels that query alone). Two queries with one request ID throw
    /// ``BatchError/duplicateRequestID`` before anything is sent.
    public nonisolated func batch(_ batch: QueryBatch) async throws -> BatchResult {
        try batch.checkUniqueIDs()
        let context = RequestContext(requestID: batch.requestID, name: "batch", operation: .batch, retry: configuration.retry,
                                     testHandler: configuration.testing.handler, authorize: true)
        return try await operation(context) { [self] in
            var results: [String: Result<any Sendable, any Error>] = [:]
            for try await (requestID, result) in batchResults(batch) { results[requestID] = result }
            try Task.checkCancellation()
            return BatchResult(results: results, requestIDs: batch.requestIDs)
        }
    }

    /// The results of `batch` as they complete, as an `AsyncSequence`. Ending the iteration early
    /// cancels the queries still running.
    public nonisolated func batchResults(_ batch: QueryBatch)
        -> AsyncThrowingStream<(requestID: String, result: Result<any Sendable, any Error>), any Error>
    {
        let limit = max(1, batch.maxConcurrency ?? configuration.limits.batchConcurrency)
        return AsyncThrowingStream { continuation in
            do { try batch.checkUniqueIDs() } catch {
                continuation.finish(throwing: error)
                return
            }
            let task = Task {
                await withTaskGroup(of: (String, Result<any Sendable, any Error>).self) { group in
                    var pending = batch.items[...]
                    func startNext() {
                        guard let item = pending.popFirst() else { return }
                        group.addTask {
                            let result: Result<any Sendable, any Error>
                            do { result = .success(try await item.execute(self)) } catch { result = .failure(error) }
                            await item.complete?(result)
                            return (item.requestID, result)
                        }
                    }
                    for _ in 0..<limit { startNext() }
                    while let (requestID, result) = await group.next() {
                        continuation.yield((requestID, result))
                        if batch.failFast, case .failure = result { group.cancelAll() }
                        if !Task.isCancelled && !(batch.failFast && group.isCancelled) {
                            startNext()
                        }
                    }
                    // Queries never started (fail-fast or cancellation) still get a result each.
                    for item in pending {
                        let result: Result<any Sendable, any Error> = .failure(CancellationError())
                        await item.complete?(result)
                        continuation.yield((item.requestID, result))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
