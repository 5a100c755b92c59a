import COpenSSL
import Foundation

/// An RSA public key that checks RS256 signatures (a service account's JWT assertions), through
/// libcrypto, the library Courier signs them with.
final class RSAPublicKey: @unchecked Sendable { // immutable after init; libcrypto keys are safe to share for verification
    private let key: OpaquePointer

    /// `pem`: SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`).
    init(pemRepresentation pem: String) throws {
        let parsed = pem.utf8CString.withUnsafeBufferPointer { courier_rsa_public_key_from_pem($0.baseAddress, $0.count - 1) }
        guard let parsed else { throw TestServerError.invalidKey }
        key = parsed
    }

    deinit { courier_pkey_free(key) }

    func isValidRS256Signature(_ signature: Data, for data: Data) -> Bool {
        signature.withUnsafeBytes { signatureBytes in
            data.withUnsafeBytes { dataBytes in
                courier_rs256_verify(key, dataBytes.bindMemory(to: UInt8.self).baseAddress, dataBytes.count,
                                     signatureBytes.bindMemory(to: UInt8.self).baseAddress, signatureBytes.count) == 1
            }
        }
    }
}
