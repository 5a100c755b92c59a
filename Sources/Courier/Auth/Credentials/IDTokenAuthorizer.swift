import Foundation

/// OpenID Connect ID tokens for calling services that check the caller's identity rather than
/// OAuth scopes: Cloud Run and Cloud Functions that require authentication, and apps behind
/// Identity-Aware Proxy. The token names the service in its audience (`aud`) and is sent as
/// `Authorization: Bearer …`.
///
/// ```swift
/// // the URL of the Cloud Run service to call, as its audience
/// let authorizer = try IDTokenAuthorizer.applicationDefault(audience: "https://hello-abc123-uc.a.run.app")
/// let service = try ServiceActor(configuration: .init(authorizer: authorizer))
/// ```
///
/// Tokens live an hour and are refreshed in the background before they expire, like access tokens.
public final class IDTokenAuthorizer: TokenAuthorizer, CustomStringConvertible {
    /// Where ID tokens come from.
    public enum Source: Sendable {
        /// The metadata server's `identity` endpoint (Compute Engine, GKE, Cloud Run, Functions).
        case metadataServer(MetadataServer, account: String = "default")
        /// A service-account key: a JWT with `target_audience`, exchanged at the token endpoint.
        case serviceAccount(ServiceAccountKey, tokenURL: URL? = nil)
        /// Another identity's credentials impersonating a service account (`generateIdToken`).
        case impersonation(source: any TokenAuthorizer, targetPrincipal: String, delegates: [String] = [],
                           iamEndpoint: URL = ImpersonatedAuthorizer.googleIAMEndpoint)
    }

    /// The `aud` of the tokens: the called service's URL (Cloud Run) or OAuth client ID (IAP).
    public let audience: String
    public let quotaProjectID: String? = nil
    let cache: TokenCache
    private let sourceName: String
    private let source: Source

    /// - Parameters:
    ///   - audience: The service the tokens are for.
    ///   - source: Where the tokens come from.
    ///   - includeEmail: Ask for the `email` claim (metadata server and impersonation).
    ///   - refresh: When tokens are refreshed.
    ///   - now: The clock for token expiry.
    public init(audience: String, source: Source, includeEmail: Bool = true, refresh: TokenRefresh = .default,
                now: @escaping @Sendable () -> Date = Date.init) throws {
        self.audience = audience
        self.source = source
        switch source {
        case .metadataServer(let server, let account):
            sourceName = "metadata"
            cache = TokenCache(source: "metadata_id_token", refresh: refresh, now: now) { service in
                let query = [("audience", audience), ("format", includeEmail ? "full" : "standard")]
                let jwt = String(decoding: try await server.get("instance/service-accounts/\(account)/identity", query: query,
                                                                name: "metadata.identity", through: service), as: UTF8.self)
                return try IDToken.accessToken(jwt.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        case .serviceAccount(let key, let tokenURL):
            guard key.universeDomain == UniverseDomain.googleDefault else {
                throw AuthError(.unsupportedCredentials, message: "a service-account key makes ID tokens only in \(UniverseDomain.googleDefault), not in \(key.universeDomain)")
            }
            sourceName = "service_account"
            let audienceURL = tokenURL ?? key.tokenURI
            let endpoint = try TokenEndpoint(url: audienceURL)
            cache = TokenCache(source: "service_account_id_token", refresh: refresh, now: now) { service in
                let assertion = try key.signedJWT(claims: [
                    "sub": .string(key.clientEmail), "aud": .string(audienceURL.absoluteString), "target_audience": .string(audience),
                ], at: now())
                let body = try await endpoint.post(
                    form: [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)],
                    name: "oauth2.id_token", through: service)
                guard let jwt = body["id_token"]?.stringValue else {
                    throw AuthError(.tokenEndpoint, message: "the token endpoint answered without id_token")
                }
                return try IDToken.accessToken(jwt)
            }
        case .impersonation(let source, let target, let delegates, let iamEndpoint):
            sourceName = "impersonation"
            let iam = try IAMCredentials(endpoint: iamEndpoint)
            cache = TokenCache(source: "impersonated_id_token", refresh: refresh, now: now) { service in
                try await iam.inUniverse(of: source, through: service)
                    .generateIDToken(target, audience: audience, delegates: delegates, includeEmail: includeEmail,
                                     authorizedBy: source, through: service)
            }
        }
    }

    /// The universe of the credentials the tokens come from.
    public func universeDomain(context: AuthorizationContext?) async throws -> String {
        switch source {
        case .metadataServer(let server, _): try await server.universeDomain(through: context?.service)
        case .serviceAccount(let key, _): key.universeDomain
        case .impersonation(let source, _, _, _): try await source.universeDomain(context: context)
        }
    }

    public var description: String { "IDTokenAuthorizer(\(audience) from \(sourceName))" }
}

extension IDTokenAuthorizer: CachedTokenAuthorizer {}
