import Foundation

/// Signs a person in with their own Google account (or any OAuth 2 provider's), for a
/// command-line or desktop tool: by browser on this machine (``withBrowser(timeout:open:)``) or,
/// with no browser here, by a code typed on another device (``withDeviceCode(clock:show:)``).
///
/// Either way the result is ``UserCredentials``: a refresh token and a first access token. Its
/// ``UserCredentials/authorizer(refresh:quotaProjectID:)`` sends queries as that person; with a
/// ``TokenStore``, the tokens are saved (0600 for ``FileTokenStore``) so the next run needs no
/// sign-in.
///
/// ```swift
/// let client = try OAuthClient(contentsOf: URL(fileURLWithPath: "client_secret.json"))
/// let signIn = UserSignIn(client: client, scopes: ["https://www.googleapis.com/auth/drive.readonly"],
///                         store: FileTokenStore(path: "~/.config/mytool/token.json"))
/// let credentials = try await signIn.withBrowser()
/// configuration.auth.authorizer = try credentials.authorizer()
/// ```
///
/// Token requests (the code exchange, the device flow's polls) go through `service` when one is
/// given, else a short-lived one: retried by its rules, logged with codes, verifiers and tokens
/// snipped.
public struct UserSignIn: Sendable {
    public var client: OAuthClient
    public var scopes: [String]
    public var store: (any TokenStore)?
    /// A login hint (an email address) the consent page starts with.
    public var loginHint: String?
    let service: ServiceActor?

    public init(client: OAuthClient, scopes: [String], store: (any TokenStore)? = nil, loginHint: String? = nil,
                through service: ServiceActor? = nil) {
        self.client = client
        self.scopes = scopes
        self.store = store
        self.loginHint = loginHint
        self.service = service
    }

    /// Exchanges a grant at the token endpoint and keeps what comes back: a refresh token is
    /// required, since the credentials must outlive the first access token.
    func redeem(_ grant: [(String, String)], name: String) async throws -> UserCredentials {
        let endpoint = try TokenEndpoint(url: client.tokenURL)
        let (token, body) = try await endpoint.requestToken(form: grant + client.formFields, scopes: scopes, name: name, through: service)
        guard let refreshToken = body["refresh_token"]?.stringValue, !refreshToken.isEmpty else {
            throw AuthError(.tokenEndpoint, message: "the token endpoint granted no refresh_token (was access_type=offline honoured?)")
        }
        let credentials = UserCredentials(client: client, refreshToken: refreshToken, accessToken: token, store: store)
        try await store?.save(StoredCredentials(accessToken: token.value, expiresAt: token.expiresAt,
                                                refreshToken: refreshToken, scopes: token.scopes))
        return credentials
    }
}

/// A signed-in person's credentials: the refresh token and the first access token.
/// Its description shows neither.
public struct UserCredentials: Sendable, CustomStringConvertible {
    public let client: OAuthClient
    /// The long-lived secret: keep it as a password is kept.
    public let refreshToken: String
    public let accessToken: AccessToken
    let store: (any TokenStore)?

    /// The scopes the person granted (they may untick some on the consent page).
    public var scopes: [String] { accessToken.scopes }

    /// Sends queries as this person: starts with the access token already granted, then
    /// refreshes it as ``OAuth2RefreshTokenAuthorizer`` does, saving to the sign-in's store.
    public func authorizer(refresh: TokenRefresh = .default, quotaProjectID: String? = nil) throws -> OAuth2RefreshTokenAuthorizer {
        let authorizer = try OAuth2RefreshTokenAuthorizer(
            clientID: client.clientID, clientSecret: client.clientSecret, refreshToken: refreshToken, scopes: scopes,
            tokenURL: client.tokenURL, quotaProjectID: quotaProjectID, refresh: refresh, store: store)
        authorizer.cache.seed(accessToken)
        return authorizer
    }

    /// The `authorized_user` credentials file Application Default Credentials reads, as
    /// `gcloud auth application-default login` writes it (`token_uri` only when not Google's).
    public func authorizedUserFile(quotaProjectID: String? = nil) -> Data {
        // gcloud's order of members.
        var object: JSONObject = ["client_id": .string(client.clientID)]
        if let secret = client.clientSecret { object["client_secret"] = .string(secret) }
        if let quotaProjectID { object["quota_project_id"] = .string(quotaProjectID) }
        object["refresh_token"] = .string(refreshToken)
        if client.tokenURL != OAuth2RefreshTokenAuthorizer.googleTokenURL { object["token_uri"] = .string(client.tokenURL.absoluteString) }
        object["type"] = .string("authorized_user")
        return object.serialized(pretty: true) + Data("\n".utf8)
    }

    public var description: String {
        "UserCredentials(\(client.clientID), refresh: \(Redaction.placeholder), scopes: \(scopes.joined(separator: " ")))"
    }
}
