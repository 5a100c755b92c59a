import Foundation

extension ServiceActor {
    /// Runs one operation (a query with all its pages, a download, an upload with all its
    /// requests, a batch) under its request ID: ``cancel(requestID:)`` reaches it wherever it
    /// is — queued for the limiter, waiting for a token, sending, or waiting to retry — and the
    /// event stream tells its start and end.
    nonisolated func operation<T: Sendable>(_ context: RequestContext,
                                            _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        if let tracing {
            return try await tracing.operation(context) { try await untracedOperation(context, body) }
        }
        return try await untracedOperation(context, body)
    }

    private nonisolated func untracedOperation<T: Sendable>(_ context: RequestContext,
                                                            _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let started = operationStarted(context)
        do {
            let value = try await requests.run(context.requestID, body)
            operationFinished(context, since: started, error: nil)
            return value
        } catch {
            operationFinished(context, since: started, error: error)
            throw error
        }
    }

    /// When the operation started; 0 when nobody would read its duration (no event subscriber,
    /// no metrics), which saves the clock reads on the plain path. This and `operationFinished`
    /// are out of line: inlined, their temporaries were slots of the caller's async frame.
    @inline(never)
    nonisolated func operationStarted(_ context: RequestContext) -> UInt64 {
        eventHub.emit(.started(requestID: context.requestID, query: context.name))
        return eventHub.hasSubscribers || metrics.isEnabled ? MonotonicClock.nanoseconds() : 0
    }

    @inline(never)
    nonisolated func operationFinished(_ context: RequestContext, since started: UInt64, error: (any Error)?) {
        guard started != 0 || eventHub.hasSubscribers else { return }
        var status = context.attempts.lastStatus
        if let apiError = error as? APIError { status = apiError.status }
        let duration = started == 0 ? .zero : RequestPipeline.elapsed(since: started)
        eventHub.emit(.finished(requestID: context.requestID, query: context.name, status: status, duration: duration,
                                error: error.map { "\($0)" }))
        metrics.operation(context.operation, status: status, error: error, duration: duration)
    }

    /// The pipeline for one request of `context`'s operation.
    nonisolated func pipeline(_ context: RequestContext) -> RequestPipeline {
        RequestPipeline(service: self, context: context)
    }
}
