/// Adds credentials to requests: GTMSessionFetcher's authorizer protocol, made async.
///
/// The service calls ``authorize(_:)`` before sending each query (and once per wire batch).
/// After a 401 it calls ``invalidate(_:)`` with the rejected request, authorizes again and
/// sends once more.
///
/// ```swift
/// configuration.authorizer = try ServiceAccountAuthorizer(keyFile: url, scopes: [Storage.Scope.readOnly])
/// ```
public protocol Authorizer: Sendable {
    /// Adds credentials (an `Authorization` header, a `key=` parameter) to `request`.
    func authorize(_ request: inout HTTPRequest) async throws
    /// The server answered 401 to `rejected`: drop the credentials it carried, so the next
    /// ``authorize(_:)`` obtains new ones (GTLR's `primeForRefresh`). Credentials newer than
    /// the rejected ones are kept, so many concurrent 401s cause one refresh.
    func invalidate(_ rejected: HTTPRequest) async
}

extension Authorizer {
    public func invalidate(_ rejected: HTTPRequest) async {}
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

    public func invalidate(_ rejected: HTTPRequest) async {
        for authorizer in authorizers { await authorizer.invalidate(rejected) }
    }
}
