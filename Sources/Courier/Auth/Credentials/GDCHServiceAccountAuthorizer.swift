import Foundation

/// A Google Distributed Cloud Hosted service account (`gdch_service_account`): a JWT signed with
/// the account's P-256 key (ES256), exchanged at the GDCH identity service (RFC 8693, subject
/// token type `urn:k8s:params:oauth:token-type:serviceaccount`) for a token for `audience`. The
/// identity service's certificate is verified against the file's `ca_cert_path` when it names one.
///
/// ```swift
/// configuration.auth.authorizer = try GDCHServiceAccountAuthorizer(
///     keyFile: URL(fileURLWithPath: "/secrets/gdch.json"), audience: "https://my-service.gdch.example")
/// ```
public final class GDCHServiceAccountAuthorizer: TokenAuthorizer, CustomStringConvertible {
    /// The parsed `gdch_service_account` file (`format_version` 1).
    public struct Key: Sendable {
        public let project: String
        public let name: String
        public let privateKeyID: String
        let privateKey: ECPrivateKey
        public let tokenURL: URL
        public let caCertificatePath: String?

        /// The identity the JWT names (`iss` and `sub`), as Google's Go and Java libraries write it.
        public var serviceIdentity: String { "system:serviceaccount:\(project):\(name)" }

        init(object: JSONObject) throws(AuthError) {
            guard object["format_version"]?.stringValue == "1" else {
                throw AuthError(.invalidCredentials, message: "gdch_service_account: only format_version \"1\" is supported")
            }
            guard let project = object["project"]?.stringValue, let name = object["name"]?.stringValue,
                  let keyID = object["private_key_id"]?.stringValue, let pem = object["private_key"]?.stringValue,
                  let text = object["token_uri"]?.stringValue, let tokenURL = URL(string: text), tokenURL.host != nil
            else {
                throw AuthError(.invalidCredentials, message: "gdch_service_account lacks project, name, private_key_id, private_key or token_uri")
            }
            guard let key = ECPrivateKey(pem: pem) else {
                throw AuthError(.invalidCredentials, message: "gdch_service_account's private_key is not a P-256 key")
            }
            try CredentialRequest.requireSecure(tokenURL, what: "GDCH token endpoint")
            self.project = project
            self.name = name
            privateKeyID = keyID
            privateKey = key
            self.tokenURL = tokenURL
            caCertificatePath = object["ca_cert_path"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        }

        /// Reads a `gdch_service_account` file.
        public init(contentsOf file: URL) throws(AuthError) {
            guard let data = FileManager.default.contents(atPath: file.path),
                  let object = (try? JSONValue(parsing: data))?.objectValue else {
                throw AuthError(.invalidCredentials, message: "cannot read \(file.path) as JSON")
            }
            try self.init(object: object)
        }
    }

    public let key: Key
    public let audience: String
    let cache: TokenCache

    public convenience init(keyFile: URL, audience: String, refresh: TokenRefresh = .default) throws {
        try self.init(key: Key(contentsOf: keyFile), audience: audience, refresh: refresh)
    }

    /// - Parameters:
    ///   - audience: What the tokens are for (Python's `with_gdch_audience`, Go's `STSAudience`).
    ///   - now: The clock for the JWT's times and the token's expiry.
    public init(key: Key, audience: String, refresh: TokenRefresh = .default, now: @escaping @Sendable () -> Date = Date.init) throws {
        guard !audience.isEmpty else { throw AuthError(.invalidCredentials, message: "GDCH credentials need an audience") }
        self.key = key
        self.audience = audience
        let endpoint = try TokenEndpoint(url: key.tokenURL)
        cache = TokenCache(source: "gdch_service_account", refresh: refresh, now: now) { service in
            let issued = JWT.seconds(now())
            let claims: JSONObject = ["iss": .string(key.serviceIdentity), "sub": .string(key.serviceIdentity),
                                      "aud": .string(key.tokenURL.absoluteString), "iat": .number(JSONNumber(issued)),
                                      "exp": .number(JSONNumber(issued + 3600))]
            let jwt = try JWT.sign(header: ["alg": "ES256", "typ": "JWT", "kid": .string(key.privateKeyID)], claims: claims, key: key.privateKey)
            return try await endpoint.requestToken(
                form: [("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"), ("audience", audience),
                       ("requested_token_type", "urn:ietf:params:oauth:token-type:access_token"), ("subject_token", jwt),
                       ("subject_token_type", "urn:k8s:params:oauth:token-type:serviceaccount")],
                scopes: [], name: "gdch.token", trustedCA: key.caCertificatePath, through: service, now: now()).0
        }
    }

    public var description: String { "GDCHServiceAccountAuthorizer(\(key.serviceIdentity))" }
}

extension GDCHServiceAccountAuthorizer: CachedTokenAuthorizer {}
