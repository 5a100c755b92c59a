import Foundation

/// A Google service account's JSON key file.
public struct ServiceAccountKey: Sendable, CustomStringConvertible {
    public let clientEmail: String
    public let privateKeyID: String?
    public let tokenURI: URL
    public let projectID: String?
    let privateKey: RSAPrivateKey

    /// Reads the key file a service account's "Create key" downloads.
    public init(contentsOf url: URL) throws {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw AuthError(.invalidCredentials, message: "cannot read the key file \(url.path)")
        }
        try self.init(json: data)
    }

    public init(json data: Data) throws {
        guard let object = (try? JSONValue(parsing: data))?.objectValue else {
            throw AuthError(.invalidCredentials, message: "the key file is not a JSON object")
        }
        guard object["type"]?.stringValue == "service_account" else {
            throw AuthError(.invalidCredentials, message: "the key file is not of type service_account")
        }
        guard let email = object["client_email"]?.stringValue, let pem = object["private_key"]?.stringValue else {
            throw AuthError(.invalidCredentials, message: "the key file lacks client_email or private_key")
        }
        guard let key = RSAPrivateKey(pem: pem) else {
            throw AuthError(.invalidCredentials, message: "the key file's private_key is not an RSA private key")
        }
        let tokenURI = object["token_uri"]?.stringValue.flatMap(URL.init(string:)) ?? OAuth2RefreshTokenAuthorizer.googleTokenURL
        clientEmail = email
        privateKeyID = object["private_key_id"]?.stringValue
        self.tokenURI = tokenURI
        projectID = object["project_id"]?.stringValue
        privateKey = key
    }

    public var description: String { "ServiceAccountKey(\(clientEmail), key \(Redaction.placeholder))" }
}

/// A service account: signs an RS256 JWT with the account's private key (through libcrypto's
/// `EVP_DigestSign`) and exchanges it for an access token with the
/// `urn:ietf:params:oauth:grant-type:jwt-bearer` grant. Tokens are cached and refreshed
/// single-flight, as ``OAuth2RefreshTokenAuthorizer``'s are.
///
/// ```swift
/// configuration.authorizer = try ServiceAccountAuthorizer(
///     keyFile: URL(fileURLWithPath: "/secrets/sa.json"),
///     scopes: ["https://www.googleapis.com/auth/devstorage.read_write"])
/// ```
public final class ServiceAccountAuthorizer: Authorizer, CustomStringConvertible {
    public let key: ServiceAccountKey
    public let scopes: [String]
    /// The user to impersonate with domain-wide delegation, if any.
    public let subject: String?
    private let cache: TokenCache

    /// Reads a service-account key file (JSON, as the Cloud console downloads it).
    ///
    /// - Parameters:
    ///   - keyFile: The key file.
    ///   - scopes: The scopes the access token is for.
    ///   - subject: The user to impersonate with domain-wide delegation, if any.
    ///   - skew: Refresh this long before the token expires.
    public convenience init(keyFile: URL, scopes: [String], subject: String? = nil, skew: Duration = .seconds(60)) throws {
        try self.init(key: ServiceAccountKey(contentsOf: keyFile), scopes: scopes, subject: subject, skew: skew)
    }

    /// - Parameters:
    ///   - key: The parsed key.
    ///   - scopes: The scopes the access token is for.
    ///   - subject: The user to impersonate with domain-wide delegation, if any.
    ///   - tokenURL: Overrides the key file's `token_uri` (a local emulator).
    ///   - skew: Refresh this long before the token expires.
    ///   - now: The clock for the JWT's times and expiry (a fixed one in tests).
    ///
    /// Token requests go through the service whose request needs the token (see ``Authorizer``).
    public init(key: ServiceAccountKey, scopes: [String], subject: String? = nil, tokenURL: URL? = nil,
                skew: Duration = .seconds(60), now: @escaping @Sendable () -> Date = Date.init) throws {
        self.key = key
        self.scopes = scopes
        self.subject = subject
        let audience = tokenURL ?? key.tokenURI
        let endpoint = try TokenEndpoint(url: audience)
        cache = TokenCache(skew: skew, now: now) { service in
            let issued = Int64(now().timeIntervalSince1970)
            var claims: JSONObject = [
                "iss": .string(key.clientEmail), "scope": .string(scopes.joined(separator: " ")),
                "aud": .string(audience.absoluteString), "iat": .number(JSONNumber(issued)),
                "exp": .number(JSONNumber(issued + 3600)),
            ]
            if let subject { claims["sub"] = .string(subject) }
            var header: JSONObject = ["alg": "RS256", "typ": "JWT"]
            if let id = key.privateKeyID { header["kid"] = .string(id) }
            let assertion = try JWT.sign(header: header, claims: claims, key: key.privateKey)
            return try await endpoint.requestToken(
                form: [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)],
                scopes: scopes, through: service).0
        }
    }

    public func authorize(_ request: inout HTTPRequest) async throws {
        request.headers["Authorization"] = "Bearer \(try await cache.token(through: nil).value)"
    }

    public func authorize(_ request: inout HTTPRequest, through service: ServiceActor) async throws {
        request.headers["Authorization"] = "Bearer \(try await cache.token(through: service).value)"
    }

    public func invalidate(_ rejected: HTTPRequest) async {
        cache.invalidate(rejected: rejected.bearerToken)
    }

    /// A valid access token, obtained if needed: through `service` when given, else through a
    /// short-lived service of its own for this one call.
    public func currentToken(through service: ServiceActor? = nil) async throws -> AccessToken {
        try await cache.token(through: service)
    }

    public var description: String { "ServiceAccountAuthorizer(\(key.clientEmail))" }
}
