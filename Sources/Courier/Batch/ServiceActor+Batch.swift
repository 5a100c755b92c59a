extension ServiceActor {
    /// Runs the queries of `batch` as concurrent queries (at most ``QueryBatch/maxConcurrency``
    /// at once) and returns every result, successes and failures.
    ///
    /// Completion handlers run before it returns. One failure never cancels the others unless
    /// ``QueryBatch/failFast`` is set. Cancelling the calling task cancels every query and throws
    /// `CancellationError`; so does ``cancel(requestID:)`` with the batch's ``QueryBatch/requestID``
    /// (each query's own ID cancels that query alone). Two queries with one request ID throw
    /// ``BatchError/duplicateRequestID`` before anything is sent.
    ///
    /// No task per query: as many long-lived workers as the batch runs at once each take the
    /// next query when their last one ends (``sendAll(_:options:maxInFlight:failFast:requestID:)``'s engine).
    public nonisolated func batch(_ batch: QueryBatch) async throws -> BatchResult {
        try batch.checkUniqueIDs()
        let context = RequestContext(requestID: batch.requestID, name: "batch", operation: .batch, retry: configuration.retry,
                                     testHandler: configuration.testing.handler, authorize: true)
        return try await operation(context) { [self] in
            var results: [String: Result<any Sendable, any Error>] = [:]
            results.reserveCapacity(batch.items.count)
            let items = batch.items
            await window(for: batch).forEach { results[items[$0.index].requestID] = $0.result }
            try Task.checkCancellation()
            return BatchResult(results: results, requestIDs: batch.requestIDs)
        }
    }

    /// The results of `batch` as they complete, as an `AsyncSequence`. Ending the iteration early
    /// cancels the queries still running.
    public nonisolated func batchResults(_ batch: QueryBatch)
        -> AsyncThrowingStream<(requestID: String, result: Result<any Sendable, any Error>), any Error>
    {
        AsyncThrowingStream { continuation in
            do { try batch.checkUniqueIDs() } catch {
                continuation.finish(throwing: error)
                return
            }
            let items = batch.items
            let task = Task {
                await window(for: batch).forEach { continuation.yield((items[$0.index].requestID, $0.result)) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The batch's queries in a ``ResultWindow``. Its workers have no executor preference: a
    /// typed query decodes its response where its worker runs, and decoding on the loop would
    /// hold every other transfer meanwhile.
    private nonisolated func window(for batch: QueryBatch) -> ResultWindow<any Sendable> {
        ResultWindow(count: batch.items.count, width: max(1, batch.maxConcurrency ?? configuration.limits.batchConcurrency),
                     failFast: batch.failFast, loop: nil, registeredAs: nil, in: requests, job: BatchJob(service: self, items: batch.items))
    }
}

/// One query of a batch: its result, then its completion handler.
private struct BatchJob: WindowJob {
    let service: ServiceActor
    let items: [BatchItem]

    func run(_ index: Int) async -> Result<any Sendable, any Error> {
        let result: Result<any Sendable, any Error>
        do { result = .success(try await items[index].execute(service)) } catch { result = .failure(error) }
        await items[index].complete?(result)
        return result
    }

    /// Queries never started (fail-fast or cancellation) still get a result each, and their handler runs.
    func skipped(_ index: Int) async -> Result<any Sendable, any Error> {
        let result: Result<any Sendable, any Error> = .failure(CancellationError())
        await items[index].complete?(result)
        return result
    }
}
