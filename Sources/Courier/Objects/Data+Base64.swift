import Foundation

/// Base64 as Google's APIs use it: `format: byte` fields and JWTs. One place for both alphabets.
extension Data {
    /// URL-safe base64 (RFC 4648 §5) without padding: needs no escaping in a URL.
    var base64URLEncoded: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes either alphabet, padded or not; nil for anything else.
    init?(anyBase64 text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        self = data
    }
}
