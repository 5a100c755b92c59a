import Foundation

/// Proof Key for Code Exchange (RFC 7636): the code is worthless without the verifier, which
/// never leaves this process until the exchange.
struct PKCE: Sendable {
    /// 43–128 characters of the unreserved set (§4.1).
    let verifier: String

    /// A new verifier: 32 random bytes, base64url without padding (43 characters), as §4.1 advises.
    init() {
        self.init(verifier: Self.randomToken(bytes: 32))
    }

    init(verifier: String) {
        self.verifier = verifier
    }

    /// `BASE64URL(SHA256(ASCII(verifier)))` (§4.2, `S256`).
    var challenge: String {
        SHA256.digest(Data(verifier.utf8)).base64URLEncoded
    }

    static let method = "S256"

    /// Random bytes from the system's generator (getrandom on Linux), base64url without padding:
    /// verifiers, and the `state` that binds a redirect to the request that asked for it.
    static func randomToken(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64URLEncoded
    }
}
