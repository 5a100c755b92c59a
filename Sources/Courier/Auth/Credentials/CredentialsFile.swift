import Foundation

/// A Google credentials file (`GOOGLE_APPLICATION_CREDENTIALS`, gcloud's ADC file), by type.
enum CredentialsFile: Sendable {
    case serviceAccount(ServiceAccountKey)
    case authorizedUser(clientID: String, clientSecret: String?, refreshToken: String, tokenURL: URL?, quotaProjectID: String?)
    case externalAccount(ExternalAccountAuthorizer.Configuration)
    /// Google Distributed Cloud Hosted: a P-256 key, exchanged at the GDCH identity service.
    case gdch(GDCHServiceAccountAuthorizer.Key)
    /// A workforce identity federation user's refresh token (`gcloud auth application-default
    /// login` with a workforce pool): refreshed at STS's `oauthtoken` endpoint, the client as HTTP Basic.
    case externalAccountAuthorizedUser(clientID: String?, clientSecret: String?, refreshToken: String, tokenURL: URL, quotaProjectID: String?,
                                       universeDomain: String)
    /// `gcloud auth application-default login --impersonate-service-account`.
    indirect case impersonated(source: CredentialsFile, target: String, iamEndpoint: URL, delegates: [String], quotaProjectID: String?)

    init(contentsOf file: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws(AuthError) {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw AuthError(.invalidCredentials, message: "cannot read \(file.path)")
        }
        guard let object = (try? JSONValue(parsing: data))?.objectValue else {
            throw AuthError(.invalidCredentials, message: "\(file.path) is not a JSON object")
        }
        do { try self.init(object: object, environment: environment) } catch {
            throw AuthError(error.code, message: "\(file.path): \(error.message)")
        }
    }

    /// - Parameter environment: What executable-sourced credentials check (`GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES`).
    init(object: JSONObject, environment: [String: String] = ProcessInfo.processInfo.environment) throws(AuthError) {
        switch object["type"]?.stringValue {
        case "service_account":
            self = .serviceAccount(try ServiceAccountKey(object: object))
        case "authorized_user":
            guard let clientID = object["client_id"]?.stringValue, let refreshToken = object["refresh_token"]?.stringValue else {
                throw AuthError(.invalidCredentials, message: "authorized_user lacks client_id or refresh_token")
            }
            // Google's OAuth endpoint refreshes users of Google Cloud's universe only.
            let universe = try UniverseDomain.inCredentials(object)
            guard universe == UniverseDomain.googleDefault else {
                throw AuthError(.unsupportedCredentials, message: "authorized_user credentials refresh only in \(UniverseDomain.googleDefault), not in \(universe)")
            }
            self = .authorizedUser(clientID: clientID, clientSecret: object["client_secret"]?.stringValue, refreshToken: refreshToken,
                                   tokenURL: object["token_uri"]?.stringValue.flatMap(URL.init(string:)),
                                   quotaProjectID: object["quota_project_id"]?.stringValue)
        case "external_account":
            self = .externalAccount(try ExternalAccountAuthorizer.Configuration(object: object, environment: environment))
        case "gdch_service_account":
            self = .gdch(try GDCHServiceAccountAuthorizer.Key(object: object))
        case "external_account_authorized_user":
            guard let refreshToken = object["refresh_token"]?.stringValue, let text = object["token_url"]?.stringValue,
                  let tokenURL = URL(string: text), tokenURL.host != nil
            else {
                throw AuthError(.invalidCredentials, message: "external_account_authorized_user lacks refresh_token or token_url")
            }
            self = .externalAccountAuthorizedUser(clientID: object["client_id"]?.stringValue, clientSecret: object["client_secret"]?.stringValue,
                                                  refreshToken: refreshToken, tokenURL: tokenURL,
                                                  quotaProjectID: object["quota_project_id"]?.stringValue,
                                                  universeDomain: try UniverseDomain.inCredentials(object))
        case "impersonated_service_account":
            guard let url = object["service_account_impersonation_url"]?.stringValue,
                  let source = object["source_credentials"]?.objectValue
            else {
                throw AuthError(.invalidCredentials, message: "impersonated_service_account lacks service_account_impersonation_url or source_credentials")
            }
            let (iam, account) = try IAMCredentials.parse(impersonationURL: url)
            let delegates = object["delegates"]?.arrayValue?.compactMap(\.stringValue) ?? []
            self = .impersonated(source: try CredentialsFile(object: source, environment: environment), target: account, iamEndpoint: iam.endpoint,
                                 delegates: delegates, quotaProjectID: object["quota_project_id"]?.stringValue)
        case let other:
            throw AuthError(.unsupportedCredentials, message: "credentials of type \(other ?? "none") are not supported")
        }
    }

    /// The authorizer these credentials make; `quotaProjectID` overrides the file's.
    /// - Parameter gdchAudience: What `gdch_service_account` tokens are for (their only scope).
    func authorizer(scopes: [String], quotaProjectID: String?, refresh: TokenRefresh, gdchAudience: String? = nil) throws -> any TokenAuthorizer {
        switch self {
        case .gdch(let key):
            guard let gdchAudience else {
                throw AuthError(.invalidCredentials, message: "gdch_service_account credentials need an audience (gdchAudience)")
            }
            return try GDCHServiceAccountAuthorizer(key: key, audience: gdchAudience, refresh: refresh)
        case .serviceAccount(let key):
            return try ServiceAccountAuthorizer(key: key, scopes: scopes, quotaProjectID: quotaProjectID, refresh: refresh)
        case .authorizedUser(let clientID, let clientSecret, let refreshToken, let tokenURL, let fileQuota):
            return try OAuth2RefreshTokenAuthorizer(
                clientID: clientID, clientSecret: clientSecret, refreshToken: refreshToken, scopes: scopes,
                tokenURL: tokenURL ?? OAuth2RefreshTokenAuthorizer.googleTokenURL, quotaProjectID: quotaProjectID ?? fileQuota,
                refresh: refresh)
        case .externalAccount(let configuration):
            return try ExternalAccountAuthorizer(configuration: configuration, scopes: scopes, quotaProjectID: quotaProjectID,
                                                 refresh: refresh)
        case .externalAccountAuthorizedUser(let clientID, let clientSecret, let refreshToken, let tokenURL, let fileQuota, let universe):
            // STS refreshes without scopes: the token keeps those of the sign-in.
            return try OAuth2RefreshTokenAuthorizer(
                clientID: clientID ?? "", clientSecret: clientSecret, refreshToken: refreshToken, scopes: [], tokenURL: tokenURL,
                clientAuthentication: clientID == nil ? .none : .basic, source: "external_account_authorized_user",
                quotaProjectID: quotaProjectID ?? fileQuota, refresh: refresh, store: nil, universeDomain: universe, now: Date.init)
        case .impersonated(let source, let target, let endpoint, let delegates, let fileQuota):
            // The source only calls IAM: cloud-platform is the scope that call needs.
            let sourceAuthorizer = try source.authorizer(scopes: [GoogleScopes.cloudPlatform], quotaProjectID: nil, refresh: refresh)
            return try ImpersonatedAuthorizer(source: sourceAuthorizer, targetPrincipal: target, scopes: scopes, delegates: delegates,
                                              iamEndpoint: endpoint, quotaProjectID: quotaProjectID ?? fileQuota, refresh: refresh)
        }
    }

    /// ID tokens for `audience` from these credentials.
    func idTokenAuthorizer(audience: String, refresh: TokenRefresh) throws -> IDTokenAuthorizer {
        switch self {
        case .serviceAccount(let key):
            return try IDTokenAuthorizer(audience: audience, source: .serviceAccount(key), refresh: refresh)
        case .impersonated(let source, let target, let endpoint, let delegates, _):
            let sourceAuthorizer = try source.authorizer(scopes: [GoogleScopes.cloudPlatform], quotaProjectID: nil, refresh: refresh)
            return try IDTokenAuthorizer(audience: audience, source: .impersonation(
                source: sourceAuthorizer, targetPrincipal: target, delegates: delegates, iamEndpoint: endpoint), refresh: refresh)
        case .externalAccount(let configuration):
            guard let url = configuration.serviceAccountImpersonationURL else {
                throw AuthError(.unsupportedCredentials, message: "external_account credentials make ID tokens only with service_account_impersonation_url")
            }
            let (iam, account) = try IAMCredentials.parse(impersonationURL: url)
            var direct = configuration
            direct.serviceAccountImpersonationURL = nil
            let federated = try ExternalAccountAuthorizer(configuration: direct, scopes: [GoogleScopes.cloudPlatform], refresh: refresh)
            return try IDTokenAuthorizer(audience: audience, source: .impersonation(
                source: federated, targetPrincipal: account, iamEndpoint: iam.endpoint), refresh: refresh)
        case .authorizedUser, .externalAccountAuthorizedUser:
            throw AuthError(.unsupportedCredentials, message: "user credentials (authorized_user) cannot make ID tokens for an audience; impersonate a service account")
        case .gdch:
            throw AuthError(.unsupportedCredentials, message: "gdch_service_account credentials make access tokens for an audience, not ID tokens")
        }
    }

    /// The project these credentials belong to, when the file says (a service-account key's
    /// `project_id`; the other types name none).
    var projectID: String? {
        if case .serviceAccount(let key) = self { return key.projectID }
        return nil
    }
}
