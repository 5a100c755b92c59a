extension CourierTransport {
    /// The request ID of the operations called inside ``withRequestID(_:operation:)``; nil: a fresh one each.
    @TaskLocal public static var requestID: String?

    /// Runs `operation` with its requests named `id`, so ``Courier/ServiceActor/cancel(requestID:)``
    /// reaches them and logs and events carry it; a generated client's methods take no options.
    ///
    /// ```swift
    /// try await CourierTransport.withRequestID("export-42") { try await client.exportNotes() }
    /// // elsewhere: await service.cancel(requestID: "export-42")
    /// ```
    public static func withRequestID<T>(_ id: String, isolation: isolated (any Actor)? = #isolation,
                                        operation: () async throws -> T) async rethrows -> T {
        try await $requestID.withValue(id, operation: operation, isolation: isolation)
    }
}
