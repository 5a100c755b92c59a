import Foundation

/// An authorizer that sends a bearer token it obtains and refreshes itself: every Google
/// credential type (service accounts, refresh tokens, the metadata server, workload identity
/// federation, impersonation, ID tokens).
///
/// Implementers provide ``token(context:)`` and ``invalidateToken(_:)``; the protocol adds the
/// `Authorization` header and, when the credentials name one, the quota project
/// (`x-goog-user-project`), which bills the request's quota to that project.
public protocol TokenAuthorizer: Authorizer {
    /// A usable token, obtained through `context`'s service if needed (a short-lived service
    /// when nil). With ``TokenRefresh/background``, a token is renewed before it expires, and
    /// in steady state this returns without suspending.
    func token(context: AuthorizationContext?) async throws -> AccessToken
    /// The server rejected `value` (nil: whatever is held): drop it unless a newer one is held.
    func invalidateToken(_ value: String?) async
    /// The project that requests bill their quota to (`quota_project_id` of a credentials
    /// file, or `GOOGLE_CLOUD_QUOTA_PROJECT`); nil sends no `x-goog-user-project`.
    var quotaProjectID: String? { get }
}

extension TokenAuthorizer {
    public var quotaProjectID: String? { nil }

    public func authorize(_ request: inout HTTPRequest) async throws {
        apply(try await token(context: nil), to: &request)
    }

    public func authorize(_ request: inout HTTPRequest, context: AuthorizationContext) async throws {
        apply(try await token(context: context), to: &request)
    }

    public func invalidate(_ rejected: HTTPRequest) async {
        await invalidateToken(rejected.bearerToken)
    }

    /// A usable token: through `service` when given, else through a short-lived service of its
    /// own for this one call.
    public func currentToken(through service: ServiceActor? = nil) async throws -> AccessToken {
        try await token(context: service.map { AuthorizationContext(service: $0) })
    }

    private func apply(_ token: AccessToken, to request: inout HTTPRequest) {
        request.headers["Authorization"] = "Bearer \(token.value)"
        if let quotaProjectID, request.headers["x-goog-user-project"] == nil {
            request.headers["x-goog-user-project"] = quotaProjectID
        }
    }
}
