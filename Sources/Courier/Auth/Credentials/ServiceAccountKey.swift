import Foundation

/// A Google service account's JSON key file.
public struct ServiceAccountKey: Sendable, CustomStringConvertible {
    public let clientEmail: String
    public let privateKeyID: String?
    public let tokenURI: URL
    public let projectID: String?
    /// The key file's `quota_project_id`, if any.
    public let quotaProjectID: String?
    /// The universe the account belongs to: the key file's `universe_domain`, else `googleapis.com`.
    public let universeDomain: String
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
        try self.init(object: object)
    }

    init(object: JSONObject) throws(AuthError) {
        guard object["type"]?.stringValue == "service_account" else {
            throw AuthError(.invalidCredentials, message: "the key file is not of type service_account")
        }
        guard let email = object["client_email"]?.stringValue, let pem = object["private_key"]?.stringValue else {
            throw AuthError(.invalidCredentials, message: "the key file lacks client_email or private_key")
        }
        guard let key = RSAPrivateKey(pem: pem) else {
            throw AuthError(.invalidCredentials, message: "the key file's private_key is not an RSA private key")
        }
        clientEmail = email
        privateKeyID = object["private_key_id"]?.stringValue
        tokenURI = object["token_uri"]?.stringValue.flatMap(URL.init(string:)) ?? OAuth2RefreshTokenAuthorizer.googleTokenURL
        projectID = object["project_id"]?.stringValue
        quotaProjectID = object["quota_project_id"]?.stringValue
        universeDomain = try UniverseDomain.inCredentials(object)
        privateKey = key
    }

    /// An RS256 JWT issued by this account: `iss` = the account, `iat` now, `exp` in an hour,
    /// plus `claims`; the header names the key (`kid`).
    func signedJWT(claims: JSONObject, at now: Date) throws(AuthError) -> String {
        let issued = JWT.seconds(now)
        var all: JSONObject = ["iss": .string(clientEmail), "iat": .number(JSONNumber(issued)),
                               "exp": .number(JSONNumber(issued + 3600))]
        for (name, value) in claims { all[name] = value }
        var header: JSONObject = ["alg": "RS256", "typ": "JWT"]
        if let privateKeyID { header["kid"] = .string(privateKeyID) }
        return try JWT.sign(header: header, claims: all, key: privateKey)
    }

    public var description: String { "ServiceAccountKey(\(clientEmail), key \(Redaction.placeholder))" }
}
