import COpenSSL
import Foundation

/// SHA-256 through the libcrypto Courier links: PKCE's challenge and AWS Signature Version 4.
enum SHA256 {
    static func digest(_ data: Data) -> Data {
        var digest = [UInt8](repeating: 0, count: 32)
        data.withUnsafeBytes { _ = courier_sha256($0.baseAddress, $0.count, &digest) }
        return Data(digest)
    }
}
