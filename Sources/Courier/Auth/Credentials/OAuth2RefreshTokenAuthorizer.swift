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
    private let universe: String

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
    public convenience init(clientID: String, clientSecret: String?, refreshToken: String, scopes: [String] = [],
                            tokenURL: URL = googleTokenURL, quotaProjectID: String? = nil, refresh: TokenRefresh = .default,
                            store: (any TokenStore)? = nil, now: @escaping @Sendable () -> Date = Date.init) throws {
        try self.init(clientID: clientID, clientSecret: clientSecret, refreshToken: refreshToken, scopes: scopes, tokenURL: tokenURL,
                      clientAuthentication: .form, source: "authorized_user", quotaProjectID: quotaProjectID, refresh: refresh,
                      store: store, now: now)
    }

    /// - Parameters:
    ///   - clientAuthentication: How the client's ID and secret travel: in the form (Google's
    ///     OAuth endpoint) or as HTTP Basic (STS's `oauthtoken`, for `external_account_authorized_user`).
    ///   - source: The credentials' kind, in metrics and events.
    ///   - universeDomain: The universe the tokens are good in (a workforce pool's file says).
    init(clientID: String, clientSecret: String?, refreshToken: String, scopes: [String], tokenURL: URL,
         clientAuthentication: ClientAuthentication, source: String, quotaProjectID: String?, refresh: TokenRefresh,
         store: (any TokenStore)?, universeDomain: String = UniverseDomain.googleDefault, now: @escaping @Sendable () -> Date) throws {
        self.quotaProjectID = quotaProjectID
        universe = universeDomain
        let endpoint = try TokenEndpoint(url: tokenURL)
        let state = RefreshState(clientID: clientID, clientSecret: clientSecret, refreshToken: refreshToken,
                                 scopes: scopes, endpoint: endpoint, clientAuthentication: clientAuthentication, store: store)
        self.state = state
        cache = TokenCache(source: source, refresh: refresh, now: now) { service in
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

    public func universeDomain(context: AuthorizationContext?) async throws -> String { universe }

    public var description: String { "OAuth2RefreshTokenAuthorizer(\(state.clientID))" }
}

/// Where a refresh grant carries the client's credentials (RFC 6749 §2.3.1 allows both).
enum ClientAuthentication: Sendable {
    case form, basic
    /// No client credentials (an `external_account_authorized_user` file without a client).
    case none
}

/// The mutable part of a refresh-token authorizer: the refresh token may rotate.
actor RefreshState {
    let clientID: String
    private let clientSecret: String?
    private var refreshToken: String
    private let scopes: [String]
    private let endpoint: TokenEndpoint
    private let clientAuthentication: ClientAuthentication
    private let store: (any TokenStore)?
    private var loaded = false

    init(clientID: String, clientSecret: String?, refreshToken: String, scopes: [String], endpoint: TokenEndpoint,
         clientAuthentication: ClientAuthentication, store: (any TokenStore)?) {
        self.clientAuthentication = clientAuthentication
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
        var form = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        var headers: [String: String] = [:]
        switch clientAuthentication {
        case .form:
            form.append(("client_id", clientID))
            if let clientSecret { form.append(("client_secret", clientSecret)) }
        case .basic:
            headers["Authorization"] = "Basic " + Data("\(clientID):\(clientSecret ?? "")".utf8).base64EncodedString()
        case .none:
            break
        }
        if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: " "))) }
        let (token, body) = try await endpoint.requestToken(form: form, scopes: scopes, headers: headers, through: service, now: now())
        if let rotated = body["refresh_token"]?.stringValue, !rotated.isEmpty { refreshToken = rotated }
        try await store?.save(StoredCredentials(accessToken: token.value, expiresAt: token.expiresAt,
                                                refreshToken: refreshToken, scopes: token.scopes))
        return token
    }
}

extension OAuth2RefreshTokenAuthorizer: CachedTokenAuthorizer {}
