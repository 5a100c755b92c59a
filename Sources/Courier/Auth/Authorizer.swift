/// Adds credentials to requests: GTMSessionFetcher's authorizer protocol, async.
///
/// The service calls ``authorize(_:)`` before sending each request (once per wire batch).
/// After a 401 it calls ``invalidate()`` and tries once more with fresh credentials.
public protocol Authorizer: Sendable {
    /// Adds credentials (an `Authorization` header, a `key=` parameter) to `request`.
    func authorize(_ request: inout HTTPRequest) async throws
    /// The server rejected the current credentials: drop them so the next ``authorize(_:)``
    /// obtains new ones (GTLR's `primeForRefresh`).
    func invalidate() async
}

extension Authorizer {
    public func invalidate() async {}
}
