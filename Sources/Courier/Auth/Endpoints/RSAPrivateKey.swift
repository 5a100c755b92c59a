import COpenSSL
import Foundation

/// An RSA private key held by libcrypto, for RS256 signatures.
///
/// Immutable once parsed; libcrypto allows concurrent signing with one key and separate
/// digest contexts, which is what each `sign` call creates.
package final class RSAPrivateKey: @unchecked Sendable {
    private let key: OpaquePointer

    /// Parses a PEM private key (PKCS#8 or PKCS#1); nil unless it is an RSA key.
    init?(pem: String) {
        let parsed = pem.withCString { courier_rsa_private_key_from_pem($0, strlen($0)) }
        guard let parsed else { return nil }
        key = parsed
    }

    deinit {
        courier_pkey_free(key)
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `data`.
    func signRS256(_ data: Data) throws(AuthError) -> Data {
        var signature = Data(count: courier_pkey_size(key))
        var length = signature.count
        let ok = signature.withUnsafeMutableBytes { output in
            data.withUnsafeBytes { input in
                courier_rs256_sign(key, input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
                                   output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length)
            }
        }
        guard ok == 1 else { throw AuthError(.signing, message: "libcrypto could not sign") }
        return signature.prefix(length)
    }

    /// A new key pair as PEM text: for tests, so no private key is ever committed.
    package static func generatePEM(bits: Int = 2048) -> (privateKey: String, publicKey: String)? {
        PEMPair.make { courier_rsa_generate_pem(Int32(clamping: bits), &$0, &$1) }
    }
}

/// A key pair libcrypto wrote as two C strings, taken over as Swift strings (the C ones freed).
enum PEMPair {
    static func make(_ generate: (inout UnsafeMutablePointer<CChar>?, inout UnsafeMutablePointer<CChar>?) -> Int32)
        -> (privateKey: String, publicKey: String)?
    {
        var privatePEM: UnsafeMutablePointer<CChar>?
        var publicPEM: UnsafeMutablePointer<CChar>?
        defer {
            free(privatePEM)
            free(publicPEM)
        }
        guard generate(&privatePEM, &publicPEM) == 1, let privatePEM, let publicPEM else { return nil }
        return (String(cString: privatePEM), String(cString: publicPEM))
    }
}

/// JSON Web Tokens (RFC 7519) signed with RS256.
enum JWT {
    /// A claim's time (`iat`): whole seconds since 1970, held where an hour more (`exp`) cannot
    /// overflow, whatever clock a caller injected.
    static func seconds(_ date: Date) -> Int64 {
        min(max(Int64(saturating: date.timeIntervalSince1970), 0), Int64.max - 86_400)
    }

    static func sign(header: JSONObject, claims: JSONObject, key: RSAPrivateKey) throws(AuthError) -> String {
        let input = header.serialized().base64URLEncoded + "." + claims.serialized().base64URLEncoded
        return input + "." + (try key.signRS256(Data(input.utf8))).base64URLEncoded
    }
}
