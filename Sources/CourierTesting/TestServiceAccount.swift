import Courier
import Foundation

/// A throwaway service account for tests: a key pair made on the spot (so no private key is
/// ever committed), the key file JSON that names it, and the public key a test token endpoint
/// needs to verify its JWTs.
///
/// ```swift
/// let account = try TestServiceAccount(email: "robot@test.iam.example.com", tokenURL: server.url("/token"))
/// try server.tokens.registerServiceAccount(email: account.email, publicKeyPEM: account.publicKeyPEM)
/// let authorizer = try ServiceAccountAuthorizer(key: account.key, scopes: ["…"])
/// ```
public struct TestServiceAccount: Sendable {
    public let email: String
    /// The key file's JSON, as the Cloud console would download it.
    public let keyFileJSON: Data
    public let publicKeyPEM: String
    public let key: ServiceAccountKey

    public init(email: String = "robot@test-project.iam.example.com", tokenURL: URL, bits: Int = 2048) throws {
        guard let pair = RSAPrivateKey.generatePEM(bits: bits) else {
            throw AuthError.signing
        }
        self.email = email
        publicKeyPEM = pair.publicKey
        keyFileJSON = try JSONSerialization.data(withJSONObject: [
            "type": "service_account", "project_id": "test-project", "private_key_id": "test-key",
            "private_key": pair.privateKey, "client_email": email, "client_id": "0",
            "token_uri": tokenURL.absoluteString,
        ], options: [.sortedKeys])
        key = try ServiceAccountKey(json: keyFileJSON)
    }

    /// Writes the key file to `url` (mode 0600) and returns `url`.
    @discardableResult
    public func writeKeyFile(to url: URL) throws -> URL {
        try keyFileJSON.write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return url
    }
}
