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

    /// The key pair a ``TestServiceAccount`` holds.
    public enum KeyPair: Sendable {
        /// A pair made now, of `bits` (2048 bits cost about 100 ms of CPU, more on a busy machine).
        case fresh(bits: Int)
        /// One 2048-bit pair, made at its first use and shared by every account in the process
        /// that asks for it: for a test that needs a valid account, not a key of its own.
        case sharedInProcess
    }

    /// An account with a key pair of its own, of `bits`.
    public init(email: String = "robot@test-project.iam.example.com", tokenURL: URL, bits: Int = 2048) throws {
        try self.init(email: email, tokenURL: tokenURL, keyPair: .fresh(bits: bits))
    }

    /// An account with the key pair `keyPair` says.
    public init(email: String = "robot@test-project.iam.example.com", tokenURL: URL, keyPair: KeyPair) throws {
        let made: (privateKey: String, publicKey: String)?
        switch keyPair {
        case .fresh(let bits): made = RSAPrivateKey.generatePEM(bits: bits)
        case .sharedInProcess: made = Self.sharedPair
        }
        guard let pair = made else {
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

    /// Made once, on first use (a static is initialised once, thread-safely).
    private static let sharedPair = RSAPrivateKey.generatePEM(bits: 2048)

    /// Writes the key file to `url` (mode 0600) and returns `url`.
    @discardableResult
    public func writeKeyFile(to url: URL) throws -> URL {
        try keyFileJSON.write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return url
    }
}
