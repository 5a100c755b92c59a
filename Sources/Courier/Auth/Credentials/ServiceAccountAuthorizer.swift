import CourierSync
import Foundation

/// A service account, by its JSON key.
///
/// Two ways to a token, as Google's libraries have:
/// - **self-signed JWT** (the default for Google's APIs): the account signs a JWT that Google's
///   APIs accept as the token itself (`scope` claim, or `aud` = the API's root URL when no
///   scopes are given), so no token round trip happens at all;
/// - **the token endpoint**: an RS256 JWT is exchanged with the
///   `urn:ietf:params:oauth:grant-type:jwt-bearer` grant. Needed for domain-wide delegation
///   (`subject`) and for non-Google token endpoints.
///
/// Either way the token is cached and refreshed single-flight in the background before it
/// expires (``TokenRefresh``).
///
/// ```swift
/// configuration.auth.authorizer = try ServiceAccountAuthorizer(
///     keyFile: URL(fileURLWithPath: "/secrets/sa.json"),
///     scopes: ["https://www.googleapis.com/auth/devstorage.read_write"])
/// ```
public final class ServiceAccountAuthorizer: TokenAuthorizer, CustomStringConvertible {
    /// Whether tokens are signed locally instead of fetched from the token endpoint.
    public enum SelfSignedJWT: Sendable, Hashable {
        /// Self-signed when Google's APIs will accept it: no `subject`, and the key's token
        /// endpoint is Google's (`*.googleapis.com`); otherwise the token endpoint.
        case automatic
        /// Always self-signed (an emulator or server that accepts them).
        case always
        /// Always the token endpoint.
        case never
    }

    public let key: ServiceAccountKey
    public let scopes: [String]
    /// The user to impersonate with domain-wide delegation, if any.
    public let subject: String?
    public let quotaProjectID: String?
    /// Whether this authorizer signs its own tokens (no token endpoint round trip).
    public let selfSigned: Bool
    private let refresh: TokenRefresh
    private let now: @Sendable () -> Date
    /// The token for `scopes` (self-signed or from the endpoint). Self-signed without scopes, it
    /// is a `cloud-platform` token for uses outside a request (another credential's IAM call).
    private let scopedCache: TokenCache
    /// Self-signed without scopes, requests carry a token per API (`aud` = its root URL).
    private let perAudience: Bool
    /// Those tokens, one cache per API root.
    private let audienceCaches = LockedValue<[String: TokenCache]>([:])

    /// Reads a service-account key file (JSON, as the Cloud console downloads it).
    public convenience init(keyFile: URL, scopes: [String], subject: String? = nil, selfSignedJWT: SelfSignedJWT = .automatic,
                            refresh: TokenRefresh = .default) throws {
        try self.init(key: ServiceAccountKey(contentsOf: keyFile), scopes: scopes, subject: subject,
                      selfSignedJWT: selfSignedJWT, refresh: refresh)
    }

    /// - Parameters:
    ///   - key: The parsed key.
    ///   - scopes: The scopes the access token is for.
    ///   - subject: The user to impersonate with domain-wide delegation, if any.
    ///   - tokenURL: Overrides the key file's `token_uri` (a local emulator).
    ///   - selfSignedJWT: Whether to sign tokens locally (see ``SelfSignedJWT``).
    ///   - quotaProjectID: Bills requests' quota to this project (`x-goog-user-project`);
    ///     defaults to the key file's `quota_project_id`.
    ///   - refresh: When tokens are refreshed.
    ///   - now: The clock for the JWT's times and expiry (a fixed one in tests).
    ///
    /// Token requests go through the service whose request needs the token (see ``Authorizer``).
    public init(key: ServiceAccountKey, scopes: [String], subject: String? = nil, tokenURL: URL? = nil,
                selfSignedJWT: SelfSignedJWT = .automatic, quotaProjectID: String? = nil,
                refresh: TokenRefresh = .default, now: @escaping @Sendable () -> Date = Date.init) throws {
        self.key = key
        self.scopes = scopes
        self.subject = subject
        self.quotaProjectID = quotaProjectID ?? key.quotaProjectID
        self.refresh = refresh
        self.now = now
        let audience = tokenURL ?? key.tokenURI
        if key.universeDomain != UniverseDomain.googleDefault {
            // Outside Google Cloud's universe no OAuth token endpoint serves service accounts:
            // the account signs its own tokens, so there is no domain-wide delegation either.
            guard subject == nil else {
                throw AuthError(.unsupportedCredentials, message: "domain-wide delegation (subject) works only in \(UniverseDomain.googleDefault), not in \(key.universeDomain)")
            }
            guard selfSignedJWT != .never else {
                throw AuthError(.unsupportedCredentials, message: "a service account of \(key.universeDomain) signs its own tokens: selfSignedJWT cannot be .never")
            }
        }
        switch selfSignedJWT {
        case .always: selfSigned = true
        case .never: selfSigned = false
        case .automatic:
            selfSigned = subject == nil
                && (key.universeDomain != UniverseDomain.googleDefault || (audience.host?.hasSuffix(".googleapis.com") ?? false))
        }
        guard !selfSigned || subject == nil else {
            throw AuthError(.invalidCredentials, message: "domain-wide delegation (subject) needs the token endpoint, not a self-signed JWT")
        }
        perAudience = selfSigned && scopes.isEmpty
        if selfSigned {
            let tokenScopes = scopes.isEmpty ? [GoogleScopes.cloudPlatform] : scopes
            let claims: JSONObject = ["sub": .string(key.clientEmail), "scope": .string(tokenScopes.joined(separator: " "))]
            scopedCache = TokenCache(source: "service_account_jwt", refresh: refresh, now: now) { _ in
                try Self.selfSignedToken(key: key, claims: claims, scopes: tokenScopes, at: now())
            }
        } else {
            let endpoint = try TokenEndpoint(url: audience)
            scopedCache = TokenCache(source: "service_account", refresh: refresh, now: now) { service in
                var claims: JSONObject = ["scope": .string(scopes.joined(separator: " ")), "aud": .string(audience.absoluteString)]
                if let subject { claims["sub"] = .string(subject) }
                let assertion = try key.signedJWT(claims: claims, at: now())
                return try await endpoint.requestToken(
                    form: [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)],
                    scopes: scopes, through: service, now: now()).0
            }
        }
    }

    /// The key's universe (its file's `universe_domain`).
    public func universeDomain(context: AuthorizationContext?) async throws -> String { key.universeDomain }

    private static func selfSignedToken(key: ServiceAccountKey, claims: JSONObject, scopes: [String], at now: Date) throws -> AccessToken {
        AccessToken(value: try key.signedJWT(claims: claims, at: now), expiresAt: now.addingTimeInterval(3600), scopes: scopes)
    }

    public func token(context: AuthorizationContext?) async throws -> AccessToken {
        try await scopedCache.token(context: context)
    }

    /// Self-signed JWTs without scopes name the API they are for (`aud`), so they are made per
    /// request host.
    public func authorize(_ request: inout HTTPRequest, context: AuthorizationContext) async throws {
        try await authorize(&request, context: Optional(context))
    }

    public func authorize(_ request: inout HTTPRequest) async throws {
        try await authorize(&request, context: nil)
    }

    private func authorize(_ request: inout HTTPRequest, context: AuthorizationContext?) async throws {
        let token = try await (perAudience ? audienceCache(for: request.url) : scopedCache).token(context: context)
        request.headers["Authorization"] = "Bearer \(token.value)"
        if let quotaProjectID, request.headers["x-goog-user-project"] == nil {
            request.headers["x-goog-user-project"] = quotaProjectID
        }
    }

    private func audienceCache(for url: URL) -> TokenCache {
        let audience = "\(url.scheme ?? "https")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")/"
        return audienceCaches.withLock { caches in
            if let cache = caches[audience] { return cache }
            let key = key, now = now
            let claims: JSONObject = ["sub": .string(key.clientEmail), "aud": .string(audience)]
            let cache = TokenCache(source: "service_account_jwt", refresh: refresh, now: now) { _ in
                try Self.selfSignedToken(key: key, claims: claims, scopes: [], at: now())
            }
            caches[audience] = cache
            return cache
        }
    }

    public func invalidateToken(_ value: String?) async {
        scopedCache.invalidate(rejected: value)
        for cache in audienceCaches.withLock({ Array($0.values) }) { cache.invalidate(rejected: value) }
    }

    public var description: String { "ServiceAccountAuthorizer(\(key.clientEmail))" }
}
