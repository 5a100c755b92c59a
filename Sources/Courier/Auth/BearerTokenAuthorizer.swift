import Foundation

/// A fixed access token, sent as `Authorization: Bearer …`. Its description hides the token.
public struct BearerTokenAuthorizer: Authorizer, CustomStringConvertible {
    private let token: String
    private let universe: String

    /// - Parameter universeDomain: The universe the token was issued in (``UniverseDomain``).
    public init(token: String, universeDomain: String = UniverseDomain.googleDefault) {
        self.token = token
        universe = universeDomain
    }

    public func universeDomain(context: AuthorizationContext?) async throws -> String { universe }

    public func authorize(_ request: inout HTTPRequest) async throws {
        request.headers["Authorization"] = "Bearer \(token)"
    }

    public var description: String { "BearerTokenAuthorizer(\(Redaction.placeholder))" }
}

/// An API key, added as `key=` to the URL (GTLR's `APIKey`). Combine it with a token
/// authorizer through ``CombinedAuthorizer`` when an API wants both.
public struct APIKeyAuthorizer: Authorizer, CustomStringConvertible {
    private let key: String

    public init(key: String) {
        self.key = key
    }

    /// An API key makes no claim of its own: it goes to whatever universe the service is in.
    public func universeDomain(context: AuthorizationContext?) async throws -> String {
        context?.service.universeDomain ?? UniverseDomain.googleDefault
    }

    public func authorize(_ request: inout HTTPRequest) async throws {
        let encoded = URITemplate.percentEncode(key, keep: URITemplate.isUnreserved)
        var text = request.url.absoluteString
        if let range = text.range(of: #"([?&])key=[^&#]*"#, options: .regularExpression) {
            let separator = text[range].first!
            text.replaceSubrange(range, with: "\(separator)key=\(encoded)")
        } else {
            let fragment = text.firstIndex(of: "#")
            let insertAt = fragment ?? text.endIndex
            let separator = text[..<insertAt].contains("?") ? "&" : "?"
            text.insert(contentsOf: "\(separator)key=\(encoded)", at: insertAt)
        }
        if let url = URL(string: text) { request.url = url }
    }

    public var description: String { "APIKeyAuthorizer(\(Redaction.placeholder))" }
}
