import Foundation

/// Where a request being authorized comes from: the service whose pipeline runs it (token
/// requests go through it) and the operation it belongs to (for events).
public struct AuthorizationContext: Sendable {
    /// The service whose request needs credentials.
    public let service: ServiceActor
    let request: RequestContext?

    init(service: ServiceActor, request: RequestContext?) {
        self.service = service
        self.request = request
    }

    /// A context for obtaining credentials outside any query (``ServiceActor`` users calling
    /// `currentToken(through:)`).
    public init(service: ServiceActor) {
        self.init(service: service, request: nil)
    }

    /// The request ID of the operation being authorized; empty outside one.
    public var requestID: String { request?.requestID ?? "" }

    /// Tells subscribers and metrics that this request waited for credentials to be obtained
    /// (a first token, or one that had expired). In steady state, with refreshes running in the
    /// background, nothing should wait.
    public func reportWaited(source: String) {
        service.eventHub.emit(.waitedForCredentials(requestID: requestID, query: request?.name ?? "", source: source))
        service.metrics.credentialWait(source: source)
    }

    /// Tells subscribers and metrics that a refresh of `source`'s credentials ended.
    func reportRefresh(source: String, background: Bool, duration: Duration, error: (any Error)?) {
        service.eventHub.emit(.credentialsRefreshed(requestID: requestID, source: source, background: background,
                                                    duration: duration, error: error.map { "\($0)" }))
        service.metrics.credentialRefresh(source: source, background: background, failed: error != nil)
    }
}
