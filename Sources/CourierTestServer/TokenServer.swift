import CourierSync
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// An OAuth 2 token endpoint at `POST /token`, and protected copies of the Notes API under
/// `/protected/notes/v1/` that answer 401 to a missing, unknown or expired bearer token.
///
/// Both grants of Google's endpoint are implemented:
/// - `refresh_token` for registered clients (``registerClient(id:secret:refreshToken:)``);
/// - `urn:ietf:params:oauth:grant-type:jwt-bearer`: the JWT's RS256 signature is verified
///   against the service account's public key (with swift-crypto, independently of the client's
///   OpenSSL), and its `aud`, `iss`, `scope` and `exp`/`iat` window are checked.
///
/// Tokens live ``tokenLifetime`` seconds. ``failNext(_:)`` makes the next refreshes fail.
/// Access tokens contain `s3kr1t`, the mark Courier's suite scans its logs for: a token that
/// reaches a log line is found without knowing its value.
public final class TokenServer: Sendable {
    /// How a scripted token request fails.
    public enum Failure: Sendable, Equatable {
        case serverError
        case invalidGrant
        /// Answers normally after a delay.
        case slow(milliseconds: Int)
    }

    struct Client { var secret: String; var refreshTokens: Set<String> }

    struct State {
        var clients: [String: Client] = [:]
        var serviceAccounts: [String: RSAPublicKey] = [:]
        var tokens: [String: Date] = [:]
        var issued = 0
        var refreshGrants = 0
        var requests = 0
        var jwtGrants = 0
        var failures: [Failure] = []
        var rotateRefreshTokens = false
        var lifetime: TimeInterval = 3600
        var lastScope: String?
        var selfSignedAccepted = 0
        var idTokensIssued = 0
    }

    private let state = LockedValue(State())
    /// The consent page and the device flow, whose grants this endpoint redeems.
    public let signIn = SignInFake()
    /// Google Distributed Cloud Hosted's identity service (`/gdch/authenticate`).
    public let gdch = GDCHFake()

    public init() {}

    /// Seconds an issued token stays valid.
    public var tokenLifetime: TimeInterval {
        get { state.withLock { $0.lifetime } }
        set { state.withLock { $0.lifetime = newValue } }
    }

    /// Answer each refresh with a new refresh token (rotation).
    public var rotatesRefreshTokens: Bool {
        get { state.withLock { $0.rotateRefreshTokens } }
        set { state.withLock { $0.rotateRefreshTokens = newValue } }
    }

    /// Successful refresh_token grants.
    public var refreshCount: Int { state.withLock { $0.refreshGrants } }
    /// Token requests received, failed ones included.
    public var requestCount: Int { state.withLock { $0.requests } }
    /// Successful jwt-bearer grants.
    public var jwtCount: Int { state.withLock { $0.jwtGrants } }
    /// The scope of the last successful grant.
    public var lastScope: String? { state.withLock { $0.lastScope } }
    /// Requests to protected routes that carried a self-signed service-account JWT as their token.
    public var selfSignedAccepted: Int { state.withLock { $0.selfSignedAccepted } }
    /// ID tokens issued (by any of the test server's fakes).
    public var idTokensIssued: Int { state.withLock { $0.idTokensIssued } }

    public func registerClient(id: String, secret: String, refreshToken: String) {
        state.withLock { state in
            _ = state.clients[id, default: Client(secret: secret, refreshTokens: [])].refreshTokens.insert(refreshToken)
        }
    }

    func isRegistered(clientID: String) -> Bool {
        state.withLock { $0.clients[clientID] != nil }
    }

    /// Whether `id` is registered with this secret (clients registered without one send none).
    func isClient(_ id: String, secret: String?) -> Bool {
        state.withLock { state in state.clients[id].map { $0.secret == (secret ?? "") } ?? false }
    }

    /// Registers a service account by email and public key (PEM, SubjectPublicKeyInfo).
    public func registerServiceAccount(email: String, publicKeyPEM: String) throws {
        let key = try RSAPublicKey(pemRepresentation: publicKeyPEM)
        state.withLock { $0.serviceAccounts[email] = key }
    }

    /// The next token requests fail (or stall) in this order.
    public func failNext(_ failures: Failure...) {
        state.withLock { $0.failures += failures }
    }

    /// Every issued token expires now: the next request with one gets a 401.
    public func expireAllTokens() {
        state.withLock { state in for key in state.tokens.keys { state.tokens[key] = .distantPast } }
    }

    func isValid(_ token: String) -> Bool {
        state.withLock { ($0.tokens[token] ?? .distantPast) > Date() } || isValidSelfSignedJWT(token)
    }

    /// A JWT a registered service account signed itself, as Google's APIs accept one: RS256 by
    /// the account's key, `iss` = `sub` = the account, an `exp` at most an hour after `iat` and
    /// not passed, and a `scope` or an `aud`.
    private func isValidSelfSignedJWT(_ token: String) -> Bool {
        guard token.hasPrefix("eyJ"), let (_, claims) = verifiedJWT(token), claims["sub"] as? String == claims["iss"] as? String,
              (claims["scope"] as? String).map({ !$0.isEmpty }) ?? (claims["aud"] is String),
              let issuedAt = (claims["iat"] as? NSNumber)?.doubleValue, let expires = (claims["exp"] as? NSNumber)?.doubleValue,
              expires - issuedAt <= 3600, expires > Date().timeIntervalSince1970
        else { return false }
        state.withLock { $0.selfSignedAccepted += 1 }
        return true
    }

    /// The header and claims of a JWT signed with RS256 by a registered service account.
    func verifiedJWT(_ token: String) -> ([String: Any], [String: Any])? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]), let claimsData = Self.base64URLDecode(parts[1]),
              let signature = Self.base64URLDecode(parts[2]),
              let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any],
              header["alg"] as? String == "RS256", let issuer = claims["iss"] as? String,
              let key = state.withLock({ $0.serviceAccounts[issuer] }),
              key.isValidRS256Signature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return nil }
        return (header, claims)
    }

    /// A new access token, valid ``tokenLifetime`` seconds, and that lifetime.
    func mint(scope: String?) -> (token: String, lifetime: TimeInterval) {
        state.withLock { state -> (String, TimeInterval) in
            state.issued += 1
            let token = "ya29.s3kr1t-\(state.issued)-\(UUID().uuidString.prefix(8))"
            state.tokens[token] = Date().addingTimeInterval(state.lifetime)
            state.lastScope = scope
            return (token, state.lifetime)
        }
    }

    /// A new ID token (a JWT whose signature segment carries the secret mark) for `audience`.
    func mintIDToken(audience: String, email: String) -> String {
        let (lifetime, number) = state.withLock { state -> (TimeInterval, Int) in
            state.idTokensIssued += 1
            return (state.lifetime, state.idTokensIssued)
        }
        let now = Int(Date().timeIntervalSince1970)
        let header = Self.base64URL(#"{"alg":"RS256","kid":"test","typ":"JWT"}"#)
        let claims = Self.base64URL(#"{"aud":"\#(audience)","email":"\#(email)","exp":\#(now + Int(lifetime)),"iat":\#(now),"iss":"https://accounts.google.com","sub":"\#(email)"}"#)
        let token = "\(header).\(claims).s3kr1t-id-\(number)"
        state.withLock { $0.tokens[token] = Date().addingTimeInterval(lifetime) }
        return token
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A failure scripted with ``failNext(_:)``, counted as a request; nil when none is due.
    func nextFailure() -> Failure? {
        state.withLock { state -> Failure? in
            state.requests += 1
            return state.failures.isEmpty ? nil : state.failures.removeFirst()
        }
    }

    /// The answer a scripted failure gives; nil to answer normally (after any delay it asks for).
    static func respond(to failure: Failure?) async throws -> Response? {
        switch failure {
        case .serverError?:
            return NotesAPI.json(["error": "internal_failure", "error_description": "The token service failed"],
                                 status: 500).hummingbirdResponse
        case .invalidGrant?:
            return oauthError("invalid_grant", "Token has been expired or revoked.")
        case .slow(let milliseconds)?:
            try await Task.sleep(for: .milliseconds(milliseconds))
            return nil
        case nil:
            return nil
        }
    }

    func add(to router: Router<BasicRequestContext>, baseURL: @escaping @Sendable () -> String, notes: NotesAPI) {
        router.post("/token") { request, _ in try await self.token(request, audience: baseURL() + "/token") }
        signIn.add(to: router, tokens: self)
        gdch.add(to: router, tokens: self)
        let protected = router.group("/protected").add(middleware: BearerTokenMiddleware(tokens: self))
        notes.add(to: protected)
    }

    private func token(_ request: Request, audience: String) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 64 << 10)
        let form = Self.parseForm(String(decoding: body.readableBytesView, as: UTF8.self))
        if let failed = try await Self.respond(to: nextFailure()) { return failed }
        switch form["grant_type"] {
        case "refresh_token":
            return refreshGrant(form)
        case "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return jwtGrant(form, audience: audience)
        case "authorization_code":
            return signIn.codeGrant(form, tokens: self)
        case "urn:ietf:params:oauth:grant-type:device_code":
            return signIn.deviceGrant(form, tokens: self)
        default:
            return Self.oauthError("unsupported_grant_type", "grant_type is not supported")
        }
    }

    func refreshGrant(_ form: [String: String]) -> Response {
        guard let clientID = form["client_id"], let refreshToken = form["refresh_token"] else {
            return Self.oauthError("invalid_request", "client_id and refresh_token are required")
        }
        enum Outcome { case granted(rotated: String?), rejected(Response) }
        let outcome = state.withLock { state -> Outcome in
            guard let client = state.clients[clientID], client.secret == form["client_secret"] else {
                return .rejected(Self.oauthError("invalid_client", "The OAuth client was not found.", status: .unauthorized))
            }
            guard client.refreshTokens.contains(refreshToken) else {
                return .rejected(Self.oauthError("invalid_grant", "Token has been expired or revoked."))
            }
            state.refreshGrants += 1
            guard state.rotateRefreshTokens else { return .granted(rotated: nil) }
            let rotated = "rt-rotated-\(state.refreshGrants)"
            state.clients[clientID]!.refreshTokens = [rotated]
            return .granted(rotated: rotated)
        }
        switch outcome {
        case .rejected(let response): return response
        case .granted(let rotated): return issue(scope: form["scope"], refreshToken: rotated)
        }
    }

    private func jwtGrant(_ form: [String: String], audience: String) -> Response {
        guard let assertion = form["assertion"] else { return Self.oauthError("invalid_request", "assertion is required") }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]), let claimsData = Self.base64URLDecode(parts[1]),
              let signature = Self.base64URLDecode(parts[2]),
              let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return Self.oauthError("invalid_grant", "Invalid JWT: malformed") }
        guard header["alg"] as? String == "RS256" else { return Self.oauthError("invalid_grant", "Invalid JWT: alg must be RS256") }
        guard let issuer = claims["iss"] as? String, let key = state.withLock({ $0.serviceAccounts[issuer] }) else {
            return Self.oauthError("invalid_grant", "Invalid JWT: unknown issuer")
        }
        let signed = Data((parts[0] + "." + parts[1]).utf8)
        guard key.isValidRS256Signature(signature, for: signed)
        else { return Self.oauthError("invalid_grant", "Invalid JWT Signature.") }
        guard claims["aud"] as? String == audience else { return Self.oauthError("invalid_grant", "Invalid JWT: wrong audience") }
        if let target = claims["target_audience"] as? String {
            state.withLock { $0.jwtGrants += 1 }
            return NotesAPI.json(["id_token": mintIDToken(audience: target, email: issuer)]).hummingbirdResponse
        }
        guard let scope = claims["scope"] as? String, !scope.isEmpty else {
            return Self.oauthError("invalid_scope", "Invalid JWT: no scope")
        }
        let now = Date().timeIntervalSince1970
        guard let issuedAt = (claims["iat"] as? NSNumber)?.doubleValue, let expires = (claims["exp"] as? NSNumber)?.doubleValue,
              expires > issuedAt, expires - issuedAt <= 3600, issuedAt <= now + 60, expires >= now - 60
        else { return Self.oauthError("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.") }
        state.withLock { $0.jwtGrants += 1 }
        return issue(scope: scope, refreshToken: nil)
    }

    func issue(scope: String?, refreshToken: String?) -> Response {
        let (token, lifetime) = mint(scope: scope)
        var body: [String: Any] = ["access_token": token, "token_type": "Bearer", "expires_in": Int(lifetime.rounded(.up))]
        if let scope { body["scope"] = scope }
        if let refreshToken { body["refresh_token"] = refreshToken }
        return NotesAPI.json(body).hummingbirdResponse
    }

    static func oauthError(_ error: String, _ description: String, status: HTTPResponse.Status = .badRequest) -> Response {
        NotesAPI.json(["error": error, "error_description": description], status: status.code).hummingbirdResponse
    }

    static func parseForm(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { result[parts[0]] = parts[1] }
        }
        return result
    }

    static func base64URLDecode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// Rejects requests without a bearer token the token server issued and that has not expired.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let tokens: TokenServer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
              tokens.isValid(String(header.dropFirst("Bearer ".count)))
        else {
            var response = NotesAPI.error(401, "authError", "Request had invalid authentication credentials.").hummingbirdResponse
            response.headers[.wwwAuthenticate] = #"Bearer realm="notes", error="invalid_token""#
            return response
        }
        return try await next(request, context)
    }
}
