import CourierSync
import Foundation
import Hummingbird

/// A fake of IAM Credentials (`POST /iam/v1/projects/-/serviceAccounts/<email>:generateAccessToken`,
/// `:generateIdToken` and `:signBlob`): the caller's bearer token must be one the ``TokenServer`` issued,
/// and the caller may impersonate every account except those ``deny(_:)`` names. Use
/// `server.url("/iam")` as the endpoint.
public final class IAMCredentialsFake: Sendable {
    struct State {
        var denied: Set<String> = []
        var accessTokens = 0
        var idTokens = 0
        var signedBlobs = 0
        var requests = 0
        var lastDelegates: [String] = []
        var lastScopes: [String] = []
        var lastLifetime: String?
    }

    private let state = LockedValue(State())
    private let tokens: TokenServer

    init(tokens: TokenServer) {
        self.tokens = tokens
    }

    /// Refuses to impersonate `account` (403 PERMISSION_DENIED).
    public func deny(_ account: String) { state.withLock { _ = $0.denied.insert(account) } }
    public var accessTokenCount: Int { state.withLock { $0.accessTokens } }
    public var idTokenCount: Int { state.withLock { $0.idTokens } }
    public var signBlobCount: Int { state.withLock { $0.signedBlobs } }

    /// The key `signBlob` signs with, for every account: made at its first use and shared by every
    /// test server in the process (a 2048-bit key costs about 100 ms of CPU; the suite starts hundreds of servers).
    private func signingKey() throws -> RSASigningKey {
        try Self.sharedSigningKey.get()
    }

    private static let sharedSigningKey = Result { try RSASigningKey() }

    /// The public half of `signBlob`'s key (SubjectPublicKeyInfo PEM), to verify what it signed.
    public func signingPublicKeyPEM() throws -> String { try signingKey().publicKeyPEM }

    /// Whether `signature` is `signBlob`'s signature of `data` (RS256 with the fake's key).
    public func isSignedBlob(_ signature: Data, of data: Data) throws -> Bool {
        try RSAPublicKey(pemRepresentation: signingKey().publicKeyPEM).isValidRS256Signature(signature, for: data)
    }
    public var requestCount: Int { state.withLock { $0.requests } }
    public var lastDelegates: [String] { state.withLock { $0.lastDelegates } }
    public var lastScopes: [String] { state.withLock { $0.lastScopes } }
    public var lastLifetime: String? { state.withLock { $0.lastLifetime } }

    func add(to router: Router<BasicRequestContext>) {
        router.post("/iam/v1/projects/-/serviceAccounts/*") { request, _ in try await self.handle(request) }
    }

    private func handle(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 64 << 10)
        state.withLock { $0.requests += 1 }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
              tokens.isValid(String(header.dropFirst("Bearer ".count)))
        else { return NotesAPI.error(401, "authError", "Request had invalid authentication credentials.").hummingbirdResponse }
        let last = request.uri.path.split(separator: "/").last.map(String.init) ?? ""
        guard let colon = last.lastIndex(of: ":") else { return NotesAPI.error(404, "notFound", "No such method").hummingbirdResponse }
        let account = String(last[..<colon]).removingPercentEncoding ?? String(last[..<colon])
        let method = last[last.index(after: colon)...]
        let json = (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]) ?? [:]
        let denied = state.withLock { state -> Bool in
            state.lastDelegates = json["delegates"] as? [String] ?? []
            return state.denied.contains(account)
        }
        if denied {
            return NotesAPI.error(403, "forbidden", "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).")
                .hummingbirdResponse
        }
        switch method {
        case "generateAccessToken":
            let scopes = json["scope"] as? [String] ?? []
            guard !scopes.isEmpty else { return NotesAPI.error(400, "badRequest", "Scope required.").hummingbirdResponse }
            state.withLock { state in
                state.accessTokens += 1
                state.lastScopes = scopes
                state.lastLifetime = json["lifetime"] as? String
            }
            let (token, lifetime) = tokens.mint(scope: scopes.joined(separator: " "))
            let expires = ISO8601DateFormatter().string(from: Date().addingTimeInterval(lifetime))
            return NotesAPI.json(["accessToken": token, "expireTime": expires]).hummingbirdResponse
        case "generateIdToken":
            guard let audience = json["audience"] as? String else {
                return NotesAPI.error(400, "badRequest", "Audience required.").hummingbirdResponse
            }
            state.withLock { $0.idTokens += 1 }
            return NotesAPI.json(["token": tokens.mintIDToken(audience: audience, email: account)]).hummingbirdResponse
        case "signBlob":
            guard let payload = json["payload"] as? String, let data = Data(base64Encoded: payload) else {
                return NotesAPI.error(400, "badRequest", "Payload required.").hummingbirdResponse
            }
            state.withLock { $0.signedBlobs += 1 }
            let signature = try signingKey().signRS256(data)
            return NotesAPI.json(["keyId": "fake-key", "signedBlob": signature.base64EncodedString()]).hummingbirdResponse
        default:
            return NotesAPI.error(404, "notFound", "No such method").hummingbirdResponse
        }
    }
}
