/// Adds credentials to requests: GTMSessionFetcher's authorizer protocol, made async.
///
/// The pipeline calls ``authorize(_:context:)`` before each attempt of each authorized request
/// (every query request, upload request, download and wire batch; raw requests when their
/// ``RequestOptions/authorize`` is set). After a 401 it calls ``invalidate(_:)`` with the rejected
/// request, authorizes again and sends once more.
///
/// ```swift
/// configuration.auth.authorizer = try ApplicationDefaultCredentials.authorizer(scopes: [Storage.Scope.readOnly])
/// ```
public protocol Authorizer: Sendable {
    /// Adds credentials (an `Authorization` header, a `key=` parameter) to `request`.
    func authorize(_ request: inout HTTPRequest) async throws
    /// ``authorize(_:)`` from inside a service's pipeline. Authorizers that fetch tokens send
    /// their token requests through `context.service`, so no second transport or thread exists
    /// and the token requests keep the service's promises (retries, logging, the test handler);
    /// they report waits and refreshes through the context (events, metrics). The default calls
    /// ``authorize(_:)``.
    func authorize(_ request: inout HTTPRequest, context: AuthorizationContext) async throws
    /// The server answered 401 to `rejected`: drop the credentials it carried, so the next
    /// ``authorize(_:)`` obtains new ones (GTLR's `primeForRefresh`). Credentials newer than
    /// the rejected ones are kept, so many concurrent 401s cause one refresh.
    func invalidate(_ rejected: HTTPRequest) async
    /// The universe these credentials are good in (``UniverseDomain``): before each authorized
    /// request the pipeline compares it with the service's, and sends nothing when they differ.
    /// The default is Google Cloud's, `googleapis.com`; credentials read from a file take the
    /// file's `universe_domain`, the metadata server's ask the server once.
    func universeDomain(context: AuthorizationContext?) async throws -> String
}

extension Authorizer {
    public func invalidate(_ rejected: HTTPRequest) async {}

    public func universeDomain(context: AuthorizationContext?) async throws -> String { UniverseDomain.googleDefault }

    public func authorize(_ request: inout HTTPRequest, context: AuthorizationContext) async throws {
        try await authorize(&request)
    }
}

/// Applies several authorizers in turn, for an API key together with a bearer token.
public struct CombinedAuthorizer: Authorizer {
    public let authorizers: [any Authorizer]

    public init(_ authorizers: any Authorizer...) {
        self.authorizers = authorizers
    }

    public func authorize(_ request: inout HTTPRequest) async throws {
        for authorizer in authorizers { try await authorizer.authorize(&request) }
    }

    public func authorize(_ request: inout HTTPRequest, context: AuthorizationContext) async throws {
        for authorizer in authorizers { try await authorizer.authorize(&request, context: context) }
    }

    public func invalidate(_ rejected: HTTPRequest) async {
        for authorizer in authorizers { await authorizer.invalidate(rejected) }
    }

    /// The universe every authorizer agrees on; ``AuthError/universeMismatch`` when two differ.
    public func universeDomain(context: AuthorizationContext?) async throws -> String {
        var agreed: String?
        for authorizer in authorizers {
            let universe = try await authorizer.universeDomain(context: context)
            if let agreed, agreed != universe {
                throw AuthError(.universeMismatch, message: "the combined authorizers belong to two universes, \(agreed) and \(universe)")
            }
            agreed = universe
        }
        return agreed ?? UniverseDomain.googleDefault
    }
}
