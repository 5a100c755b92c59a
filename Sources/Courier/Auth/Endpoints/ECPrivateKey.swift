import COpenSSL
import Foundation

/// A P-256 private key held by libcrypto, for ES256 signatures (GDCH service accounts).
/// Immutable once parsed; each signature makes its own digest context.
package final class ECPrivateKey: @unchecked Sendable {
    private let key: OpaquePointer

    /// Parses a PEM private key (SEC1 or PKCS#8); nil unless it is a P-256 key.
    init?(pem: String) {
        let parsed = pem.withCString { courier_ec_private_key_from_pem($0, strlen($0)) }
        guard let parsed else { return nil }
        key = parsed
    }

    deinit {
        courier_pkey_free(key)
    }

    /// ECDSA with SHA-256 over `data`, as JWS writes it (RFC 7518 §3.4): r then s, 64 bytes.
    func signES256(_ data: Data) throws(AuthError) -> Data {
        var signature = Data(count: 64)
        let ok = signature.withUnsafeMutableBytes { output in
            data.withUnsafeBytes { input in
                courier_es256_sign(key, input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                                   output.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard ok == 1 else { throw AuthError(.signing, message: "libcrypto could not sign") }
        return signature
    }

    /// A new key pair as PEM text: for tests, so no private key is ever committed.
    package static func generatePEM() -> (privateKey: String, publicKey: String)? {
        PEMPair.make { courier_ec_generate_pem(&$0, &$1) }
    }
}

extension JWT {
    static func sign(header: JSONObject, claims: JSONObject, key: ECPrivateKey) throws(AuthError) -> String {
        let input = header.serialized().base64URLEncoded + "." + claims.serialized().base64URLEncoded
        return input + "." + (try key.signES256(Data(input.utf8))).base64URLEncoded
    }
}
