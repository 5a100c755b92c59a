import COpenSSL
import Foundation

/// An RSA key pair made at run time, that signs as Google's service-account keys do (RS256):
/// the IAM Credentials fake's `signBlob`. No private key is ever committed.
final class RSASigningKey: @unchecked Sendable { // immutable after init; libcrypto signs with separate contexts
    private let key: OpaquePointer
    /// SubjectPublicKeyInfo PEM of the public half.
    let publicKeyPEM: String

    init() throws {
        var privatePEM: UnsafeMutablePointer<CChar>?
        var publicPEM: UnsafeMutablePointer<CChar>?
        guard courier_rsa_generate_pem(2048, &privatePEM, &publicPEM) == 1, let privatePEM, let publicPEM else {
            throw TestServerError.invalidKey
        }
        defer {
            free(privatePEM)
            free(publicPEM)
        }
        guard let parsed = courier_rsa_private_key_from_pem(privatePEM, strlen(privatePEM)) else { throw TestServerError.invalidKey }
        key = parsed
        publicKeyPEM = String(cString: publicPEM)
    }

    deinit { courier_pkey_free(key) }

    func signRS256(_ data: Data) throws -> Data {
        var signature = [UInt8](repeating: 0, count: courier_pkey_size(key))
        var length = signature.count
        let ok = data.withUnsafeBytes { input in
            courier_rs256_sign(key, input.bindMemory(to: UInt8.self).baseAddress, input.count, &signature, &length)
        }
        guard ok == 1 else { throw TestServerError.invalidKey }
        return Data(signature.prefix(length))
    }
}
