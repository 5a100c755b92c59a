extension ServiceActor {
    /// Cancels the operation running under `requestID`, for code that holds an ID rather than a
    /// task (EvriApi's cancel): a query (between pages too), a raw request sent with
    /// ``RequestOptions/requestID``, a download, an upload, or a whole batch by its
    /// ``QueryBatch/requestID``. The operation throws `CancellationError` wherever it is: queued
    /// for the limiter, waiting for a token, sending, or waiting to retry. Cancelling a finished
    /// or unknown request does nothing.
    public nonisolated func cancel(requestID: String) async {
        requests.cancel(requestID)
    }

    /// Events of every operation from now on: started, retrying, next page, finished. Each access
    /// is a new subscription; it ends when the service shuts down.
    public nonisolated var events: AsyncStream<ServiceEvent> { eventHub.subscribe() }
}
