import Foundation

extension ServiceActor {
    /// Runs one operation (a query with all its pages, a download, an upload with all its
    /// requests, a batch) under its request ID: ``cancel(requestID:)`` reaches it wherever it
    /// is — queued for the limiter, waiting for a token, sending, or waiting to retry — and the
    /// event stream tells its start and end. An operation nobody can name (a raw request sent
    /// without ``RequestOptions/requestID``) is not `registered`, so it costs no child task.
    nonisolated func operation<T: Sendable>(_ context: RequestContext, registered: Bool = true,
                                            _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        eventHub.emit(.started(requestID: context.requestID, query: context.name))
        let started = ContinuousClock.now
        do {
            let value = registered ? try await requests.run(context.requestID, body) : try await body()
            finish(context, since: started, error: nil)
            return value
        } catch {
            finish(context, since: started, error: error)
            throw error
        }
    }

    private nonisolated func finish(_ context: RequestContext, since started: ContinuousClock.Instant, error: (any Error)?) {
        var status = context.observedStatus.status
        if let apiError = error as? APIError { status = apiError.status }
        let duration = ContinuousClock.now - started
        eventHub.emit(.finished(requestID: context.requestID, query: context.name, status: status, duration: duration,
                                error: error.map { "\($0)" }))
        metrics.operation(context.operation, status: status, error: error, duration: duration)
    }

    /// The pipeline for one request of `context`'s operation.
    nonisolated func pipeline(_ context: RequestContext) -> RequestPipeline {
        RequestPipeline(service: self, context: context)
    }
}
