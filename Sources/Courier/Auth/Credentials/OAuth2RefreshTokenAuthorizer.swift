import Foundation
import Synchronization

/// OAuth 2 with a refresh token (RFC 6749 §6): the authorized-user credentials of a Google
/// account (`gcloud auth application-default login`) or any OAuth 2 provider.
///
/// The access token is cached with its expiry and refreshed single-flight in the background
/// before it expires (``TokenRefresh``): a thousand queries cause one refresh. A rotated
/// refresh token is kept. A ``TokenStore`` makes both survive a restart.
///
/// ```swift
/// let authorizer = try OAuth2RefreshTokenAuthorizer(
///     clientID: "….apps.googleusercontent.com", clientSecret: secret, refreshToken: refreshToken,
///     scopes: ["https://www.googleapis.com/auth/drive.readonly"],
///     store: FileTokenStore(path: "~/.config/myapp/token.json"))
/// ```
public final class OAuth2RefreshTokenAuthorizer: TokenAuthorizer, CustomStringConvertible {
    public static let googleTokenURL = URL(string: "https://oauth2.googleapis.com/token")!

    let cache: TokenCache
    private let state: RefreshState
    private let storeLoaded = Atomic<Bool>(false)
    public let quotaProjectID: String?

    /// - Parameters:
    ///   - clientID: The OAuth client's ID.
    ///   - clientSecret: The client's secret; nil for clients without one.
    ///   - refreshToken: The long-lived token the refresh grant exchanges.
    ///   - scopes: Scopes to ask for; empty keeps those of the refresh token.
    ///   - tokenURL: The token endpoint; https unless loopback.
    ///   - quotaProjectID: Bills requests' quota to this project (`x-goog-user-project`).
    ///   - refresh: When the access token is refreshed.
    ///   - store: Persists the access and refresh tokens.
    ///   - now: The clock for token expiry (a fixed one in tests).
    ///
    /// Token requests go through the service whose request needs the token (see ``Authorizer``).
    public init(clientID: String, clientSecret: String?, refreshToken: String, scopes: [String] = [],
                tokenURL: URL = googleTokenURL, quotaProjectID: String? = nil, refresh: TokenRefresh = .default,
                store: (any TokenStore)? = nil, now: @escaping @Sendable () -> Date = Date.init) throws {
        self.quotaProjectID = quotaProjectID
        let endpoint = try TokenEndpoint(url: tokenURL)
        let state = RefreshState(clientID: clientID, clientSecret: clientSecret, refreshToken: refreshToken,
                                 scopes: scopes, endpoint: endpoint, store: store)
        self.state = state
        cache = TokenCache(source: "authorized_user", refresh: refresh, now: now) { service in
            try await state.refresh(through: service, now: now)
        }
    }

    public func token(context: AuthorizationContext?) async throws -> AccessToken {
        if !storeLoaded.load(ordering: .acquiring) {
            try await state.loadStoredToken(into: cache)
            storeLoaded.store(true, ordering: .releasing)
        }
        return try await cache.token(context: context)
    }

    public var description: String { "OAuth2RefreshTokenAuthorizer(\(state.clientID))" }
}

/// The mutable part of a refresh-token authorizer: the refresh token may rotate.
actor RefreshState {
    let clientID: String
    private let clientSecret: String?
    private var refreshToken: String
    private let scopes: [String]
    private let endpoint: TokenEndpoint
    private let store: (any TokenStore)?
    private var loaded = false

    init(clientID: String, clientSecret: String?, refreshToken: String, scopes: [String], endpoint: TokenEndpoint,
         store: (any TokenStore)?) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.refreshToken = refreshToken
        self.scopes = scopes
        self.endpoint = endpoint
        self.store = store
    }

    /// Once: seeds the cache with a stored token that is still good, and a stored refresh token.
    func loadStoredToken(into cache: TokenCache) async throws {
        guard !loaded else { return }
        loaded = true
        guard let stored = try await store?.load() else { return }
        if let rotated = stored.refreshToken { refreshToken = rotated }
        if let value = stored.accessToken {
            cache.seed(AccessToken(value: value, expiresAt: stored.expiresAt, scopes: stored.scopes))
        }
    }

    func refresh(through service: ServiceActor?, now: @Sendable () -> Date) async throws -> AccessToken {
        var form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)]
        if let clientSecret { form.append(("client_secret", clientSecret)) }
        if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: " "))) }
        let (token, body) = try await endpoint.requestToken(form: form, scopes: scopes, through: service, now: now())
        if let rotated = body["refresh_token"]?.stringValue, !rotated.isEmpty { refreshToken = rotated }
        try await store?.save(StoredCredentials(accessToken: token.value, expiresAt: token.expiresAt,
                                                refreshToken: refreshToken, scopes: token.scopes))
        return token
    }
}

extension OAuth2RefreshTokenAuthorizer: CachedTokenAuthorizer {}
