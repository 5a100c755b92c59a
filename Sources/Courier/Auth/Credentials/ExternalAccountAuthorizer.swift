import Foundation

/// Workload identity federation (`external_account` credentials): a token from another
/// identity provider — a Kubernetes service-account token, a GitHub Actions or GitLab OIDC
/// token, Azure's managed identity — is exchanged at Google's Security Token Service (RFC 8693)
/// for a Google access token, and, when the configuration names a service account, that token
/// is traded for the service account's through IAM Credentials.
///
/// ```swift
/// // the file `gcloud iam workload-identity-pools create-cred-config` writes
/// configuration.auth.authorizer = try ExternalAccountAuthorizer(
///     contentsOf: URL(fileURLWithPath: "/etc/workload-identity/credentials.json"),
///     scopes: ["https://www.googleapis.com/auth/cloud-platform"])
/// ```
///
/// The subject token comes from a file, a URL, an executable (``SubjectTokenSource/executable(_:)``)
/// or AWS (a signed `GetCallerIdentity` request, ``SubjectTokenSource/aws(_:)``).
public final class ExternalAccountAuthorizer: TokenAuthorizer, CustomStringConvertible {
    /// The parsed `external_account` file. Its description shows the audience and where the
    /// subject token comes from, never the client secret.
    public struct Configuration: Sendable, CustomStringConvertible {
        /// The workload identity pool provider (`//iam.googleapis.com/projects/…/providers/…`).
        public var audience: String
        /// `urn:ietf:params:oauth:token-type:jwt`, `…:id_token`, `…:saml2`, …
        public var subjectTokenType: String
        public var tokenURL: URL
        public var subjectToken: SubjectTokenSource
        /// `…/serviceAccounts/<email>:generateAccessToken`, when the pool's identity impersonates
        /// a service account.
        public var serviceAccountImpersonationURL: String?
        public var impersonationLifetime: Duration
        /// OAuth client credentials for the STS call (workforce pools), if any.
        public var clientID: String?
        public var clientSecret: String?
        /// The user project of a workforce pool, sent as the STS `options`.
        public var workforcePoolUserProject: String?
        public var quotaProjectID: String?
        /// The universe the pool belongs to: the file's `universe_domain`, else `googleapis.com`.
        /// Without a `token_url`, STS is `sts.<universe>`.
        public var universeDomain: String

        public var description: String {
            "ExternalAccountAuthorizer.Configuration(\(audience), \(subjectToken)\(clientSecret == nil ? "" : ", client secret \(Redaction.placeholder)"))"
        }

        /// - Parameter environment: Executable sources run only when it sets
        ///   `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1`.
        public init(json data: Data, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
            guard let object = (try? JSONValue(parsing: data))?.objectValue else {
                throw AuthError(.invalidCredentials, message: "the external_account file is not a JSON object")
            }
            try self.init(object: object, environment: environment)
        }

        init(object: JSONObject, environment: [String: String]) throws(AuthError) {
            guard object["type"]?.stringValue == "external_account" else {
                throw AuthError(.invalidCredentials, message: "the credentials are not of type external_account")
            }
            guard let audience = object["audience"]?.stringValue, let tokenType = object["subject_token_type"]?.stringValue,
                  let source = object["credential_source"]?.objectValue
            else {
                throw AuthError(.invalidCredentials, message: "external_account lacks audience, subject_token_type or credential_source")
            }
            self.audience = audience
            subjectTokenType = tokenType
            universeDomain = try UniverseDomain.inCredentials(object)
            let tokenText = object["token_url"]?.stringValue ?? "https://sts.\(universeDomain)/v1/token"
            guard let tokenURL = URL(string: tokenText) else {
                throw AuthError(.invalidCredentials, message: "external_account token_url is not a URL")
            }
            try CredentialRequest.requireSecure(tokenURL, what: "STS endpoint")
            self.tokenURL = tokenURL
            subjectToken = try SubjectTokenSource(credentialSource: source, environment: environment)
            serviceAccountImpersonationURL = object["service_account_impersonation_url"]?.stringValue
            if let url = serviceAccountImpersonationURL { _ = try IAMCredentials.parse(impersonationURL: url) }
            // 10 minutes to 12 hours, as Google's libraries accept (and IAM grants): anything else,
            // 1e300 or a fraction included, is refused here rather than trap or reach IAM.
            let seconds = object["service_account_impersonation"]?.objectValue?["token_lifetime_seconds"]?.doubleValue ?? 3600
            guard (600...43_200).contains(seconds), seconds == seconds.rounded() else {
                throw AuthError(.invalidCredentials,
                                message: "service_account_impersonation.token_lifetime_seconds must be a whole number from 600 to 43200")
            }
            impersonationLifetime = .seconds(Int64(seconds))
            clientID = object["client_id"]?.stringValue
            clientSecret = object["client_secret"]?.stringValue
            workforcePoolUserProject = object["workforce_pool_user_project"]?.stringValue
            quotaProjectID = object["quota_project_id"]?.stringValue
        }
    }

    public let configuration: Configuration
    public let scopes: [String]
    public let quotaProjectID: String?
    let cache: TokenCache

    public convenience init(contentsOf url: URL, scopes: [String], refresh: TokenRefresh = .default) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw AuthError(.invalidCredentials, message: "cannot read \(url.path)")
        }
        try self.init(configuration: Configuration(json: data), scopes: scopes, refresh: refresh)
    }

    /// - Parameters:
    ///   - configuration: The `external_account` file, parsed.
    ///   - scopes: The scopes of the final token (`cloud-platform` when empty).
    ///   - quotaProjectID: Bills requests' quota to this project (`x-goog-user-project`).
    ///   - refresh: When tokens are refreshed.
    ///   - now: The clock for token expiry.
    public init(configuration: Configuration, scopes: [String], quotaProjectID: String? = nil, refresh: TokenRefresh = .default,
                now: @escaping @Sendable () -> Date = Date.init) throws {
        self.configuration = configuration
        let scopes = scopes.isEmpty ? [GoogleScopes.cloudPlatform] : scopes
        self.scopes = scopes
        self.quotaProjectID = quotaProjectID ?? configuration.quotaProjectID
        let sts = try TokenEndpoint(url: configuration.tokenURL)
        let impersonation = try configuration.serviceAccountImpersonationURL.map { text throws(AuthError) in
            try IAMCredentials.parse(impersonationURL: text)
        }
        cache = TokenCache(source: "external_account", refresh: refresh, now: now) { service in
            let federated = try await Self.exchange(configuration, scopes: impersonation == nil ? scopes : [GoogleScopes.cloudPlatform],
                                                    sts: sts, through: service, now: now())
            guard let impersonation else { return federated }
            let stsAuthorizer = FixedTokenAuthorizer(token: federated)
            return try await impersonation.iam.generateAccessToken(
                impersonation.account, scopes: scopes, delegates: [], lifetime: configuration.impersonationLifetime,
                authorizedBy: stsAuthorizer, through: service)
        }
    }

    /// The STS token exchange (RFC 8693) of the current subject token.
    private static func exchange(_ configuration: Configuration, scopes: [String], sts: TokenEndpoint,
                                 through service: ServiceActor?, now: Date) async throws -> AccessToken {
        let subjectToken = try await configuration.subjectToken.read(through: service, for: configuration)
        var form = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"), ("audience", configuration.audience),
            ("requested_token_type", "urn:ietf:params:oauth:token-type:access_token"),
            ("subject_token_type", configuration.subjectTokenType), ("subject_token", subjectToken),
            ("scope", scopes.joined(separator: " ")),
        ]
        var headers: [String: String] = [:]
        if let clientID = configuration.clientID {
            let credentials = "\(clientID):\(configuration.clientSecret ?? "")"
            headers["Authorization"] = "Basic \(Data(credentials.utf8).base64EncodedString())"
        } else if let project = configuration.workforcePoolUserProject {
            form.append(("options", #"{"userProject":"\#(project)"}"#))
        }
        return try await sts.requestToken(form: form, scopes: scopes, headers: headers, name: "sts.token", through: service, now: now).0
    }

    /// The pool's universe (its file's `universe_domain`).
    public func universeDomain(context: AuthorizationContext?) async throws -> String { configuration.universeDomain }

    public var description: String { "ExternalAccountAuthorizer(\(configuration.audience))" }
}

/// A token already in hand, as the authorizer of one IAM call (the STS token that impersonates).
struct FixedTokenAuthorizer: TokenAuthorizer {
    let fixed: AccessToken

    init(token: AccessToken) {
        fixed = token
    }

    func token(context: AuthorizationContext?) async throws -> AccessToken { fixed }
    func invalidateToken(_ value: String?) async {}
}

/// Scopes Courier's credentials use on their own.
enum GoogleScopes {
    static let cloudPlatform = "https://www.googleapis.com/auth/cloud-platform"
}

extension ExternalAccountAuthorizer: CachedTokenAuthorizer {}
