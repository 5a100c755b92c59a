import COpenSSL
import CourierSync
import Foundation
import Hummingbird

/// The identity service of Google Distributed Cloud Hosted (`POST /gdch/authenticate`): an RFC
/// 8693 exchange whose subject token is a JWT a registered service account signed with its P-256
/// key (ES256, verified here through libcrypto), for `system:serviceaccount:<project>:<name>`.
public final class GDCHFake: Sendable {
    struct Account: @unchecked Sendable { // the key is immutable once parsed
        let identity: String
        let keyID: String
        let key: OpaquePointer
        let tokenURL: String
    }

    struct State {
        var accounts: [String: Account] = [:]
        var exchanges = 0
        var refused = 0
        var lastAudience: String?
    }

    private let state = LockedValue(State())

    init() {}

    deinit {
        state.withLock { state in for account in state.accounts.values { courier_pkey_free(account.key) } }
    }

    public var exchangeCount: Int { state.withLock { $0.exchanges } }
    public var refusedCount: Int { state.withLock { $0.refused } }
    public var lastAudience: String? { state.withLock { $0.lastAudience } }

    /// Registers an account by its public key (PEM, SubjectPublicKeyInfo) and the token URL its
    /// clients know this service by (the JWT's `aud`).
    public func register(project: String, name: String, keyID: String, publicKeyPEM: String, tokenURL: String) throws {
        guard let key = publicKeyPEM.withCString({ courier_ec_public_key_from_pem($0, strlen($0)) }) else {
            throw GDCHFakeError.notAP256Key
        }
        let identity = "system:serviceaccount:\(project):\(name)"
        state.withLock { state in
            if let old = state.accounts[identity] { courier_pkey_free(old.key) }
            state.accounts[identity] = Account(identity: identity, keyID: keyID, key: key, tokenURL: tokenURL)
        }
    }

    public enum GDCHFakeError: Error { case notAP256Key }

    func add(to router: Router<BasicRequestContext>, tokens: TokenServer) {
        router.post("/gdch/authenticate") { request, _ in
            var request = request
            let form = TokenServer.parseForm(String(decoding: try await request.collectBody(upTo: 64 << 10).readableBytesView, as: UTF8.self))
            guard let audience = self.verified(form) else {
                self.state.withLock { $0.refused += 1 }
                return TokenServer.oauthError("invalid_grant", "The subject token is not a valid service account JWT.")
            }
            self.state.withLock { state in
                state.exchanges += 1
                state.lastAudience = audience
            }
            let (token, lifetime) = tokens.mint(scope: nil)
            return NotesAPI.json(["access_token": token, "token_type": "Bearer", "expires_in": Int(lifetime),
                                  "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"]).hummingbirdResponse
        }
    }

    /// The exchange's audience when the form is a well-formed exchange of a valid JWT.
    private func verified(_ form: [String: String]) -> String? {
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange",
              form["requested_token_type"] == "urn:ietf:params:oauth:token-type:access_token",
              form["subject_token_type"] == "urn:k8s:params:oauth:token-type:serviceaccount",
              let audience = form["audience"], !audience.isEmpty, let jwt = form["subject_token"]
        else { return nil }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = TokenServer.base64URLDecode(parts[0]), let claimsData = TokenServer.base64URLDecode(parts[1]),
              let signature = TokenServer.base64URLDecode(parts[2]), signature.count == 64,
              let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any],
              header["alg"] as? String == "ES256", let issuer = claims["iss"] as? String, claims["sub"] as? String == issuer,
              let account = state.withLock({ $0.accounts[issuer] }), header["kid"] as? String == account.keyID,
              claims["aud"] as? String == account.tokenURL,
              let issued = (claims["iat"] as? NSNumber)?.doubleValue, let expires = (claims["exp"] as? NSNumber)?.doubleValue,
              expires > issued, expires - issued <= 3600, expires > Date().timeIntervalSince1970
        else { return nil }
        let signed = Data((parts[0] + "." + parts[1]).utf8)
        let valid = signed.withUnsafeBytes { data in
            signature.withUnsafeBytes { signature in
                courier_es256_verify(account.key, data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count,
                                     signature.baseAddress?.assumingMemoryBound(to: UInt8.self))
            }
        }
        return valid == 1 ? audience : nil
    }
}
