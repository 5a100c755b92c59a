extension ServiceActor {
    /// Cancels the query executing under `requestID`, for code that holds an ID rather than a
    /// task (EvriApi's cancel). The execution throws `CancellationError`, whether it was sending,
    /// waiting to retry or between pages. Cancelling a finished or unknown request does nothing.
    public nonisolated func cancel(requestID: String) async {
        guard let transferID = requests.cancel(requestID) else { return }
        await cancelTransfer(transferID)
    }

    private func cancelTransfer(_ id: UInt64) {
        multi.registry[id]?.cancel(with: CancellationError())
    }

    /// Events of every query from now on: started, retrying, next page, finished. Each access
    /// is a new subscription; it ends when the service shuts down.
    public nonisolated var events: AsyncStream<ServiceEvent> { eventHub.subscribe() }
}
