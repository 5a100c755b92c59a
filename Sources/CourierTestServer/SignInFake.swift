import COpenSSL
import CourierSync
import Foundation
import HTTPTypes
import Hummingbird

/// Google's authorization server as a person meets it, for sign-in tests: a consent page
/// (`GET /o/oauth2/v2/auth`) that redirects to the loopback listener with a code, the
/// `authorization_code` grant that checks the PKCE verifier (RFC 7636 S256) and the redirect URI,
/// and the device flow (`POST /device/code`, the `device_code` grant, RFC 8628) with Google's
/// statuses (428 `authorization_pending`, 403 `slow_down` and `access_denied`, 400 `expired_token`).
///
/// Clients are the token server's (``TokenServer/registerClient(id:secret:refreshToken:)``); a
/// granted refresh token is registered with it, so it refreshes like any other.
public final class SignInFake: Sendable {
    /// What the person does on the consent page.
    public enum Consent: Sendable, Equatable {
        /// Allows: the page submits itself, and the browser is redirected with a code.
        case approve
        /// Declines: redirected with `error=access_denied`.
        case deny
        /// Allows, but the redirect carries another `state` (a forged or stale answer).
        case wrongState
        /// Never answers: the page waits.
        case ignore
    }

    /// The token endpoint's answer to one device-flow poll.
    public enum DevicePoll: Sendable, Equatable {
        case pending, slowDown, approve, deny, expire
    }

    struct Pending: Sendable { var clientID: String; var redirectURI: String; var state: String; var challenge: String; var scope: String }

    struct State {
        var consent = Consent.approve
        var devicePolls: [DevicePoll] = []
        var deviceInterval = 5
        var authorizationQuery: [String: String] = [:]
        var requests: [String: Pending] = [:]
        var codes: [String: Pending] = [:]
        var devices: [String: (clientID: String, scope: String)] = [:]
        var issued = 0
        var exchanges = 0
        var refusedExchanges = 0
        var polls = 0
        var consentPages = 0
    }

    private let state = LockedValue(State())

    init() {}

    public var consent: Consent {
        get { state.withLock { $0.consent } }
        set { state.withLock { $0.consent = newValue } }
    }

    /// The answers to the next device-flow polls, in order; `.approve` once they are used up.
    public func scriptDevicePolls(_ polls: DevicePoll...) {
        state.withLock { $0.devicePolls += polls }
    }

    /// The `interval` the device flow is told to poll at, in seconds.
    public var deviceInterval: Int {
        get { state.withLock { $0.deviceInterval } }
        set { state.withLock { $0.deviceInterval = newValue } }
    }

    /// The query of the last consent page asked for.
    public var lastAuthorizationQuery: [String: String] { state.withLock { $0.authorizationQuery } }
    /// Codes exchanged for tokens.
    public var codeExchanges: Int { state.withLock { $0.exchanges } }
    /// Code exchanges refused (a wrong verifier, redirect URI or client; a code used twice).
    public var refusedExchanges: Int { state.withLock { $0.refusedExchanges } }
    /// Device-flow polls received.
    public var devicePollCount: Int { state.withLock { $0.polls } }
    /// Consent pages served.
    public var consentPageCount: Int { state.withLock { $0.consentPages } }

    func add(to router: Router<BasicRequestContext>, tokens: TokenServer) {
        router.get("/o/oauth2/v2/auth") { request, _ in self.consentPage(request, tokens: tokens) }
        router.post("/o/oauth2/v2/approve") { request, _ in try await self.approve(request) }
        router.post("/device/code") { request, _ in try await self.deviceCode(request, tokens: tokens) }
    }

    private func consentPage(_ request: Request, tokens: TokenServer) -> Response {
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
        let consent = state.withLock { state -> Consent in
            state.authorizationQuery = query
            state.consentPages += 1
            return state.consent
        }
        guard let clientID = query["client_id"], tokens.isRegistered(clientID: clientID) else {
            return Self.page("Error 401: invalid_client", status: .unauthorized)
        }
        guard query["response_type"] == "code", let redirect = query["redirect_uri"], redirect.hasPrefix("http://127.0.0.1:"),
              let state = query["state"], let challenge = query["code_challenge"], challenge.count >= 43,
              query["code_challenge_method"] == "S256", let scope = query["scope"], !scope.isEmpty
        else { return Self.page("Error 400: invalid_request", status: .badRequest) }
        let id = UUID().uuidString
        self.state.withLock { $0.requests[id] = Pending(clientID: clientID, redirectURI: redirect, state: state, challenge: challenge, scope: scope) }
        // The person's click on Allow (or Cancel) is the page's script; `.ignore` has none.
        let decision = consent == .deny ? "deny" : "allow"
        let script = consent == .ignore ? "" : "<script>document.getElementById('consent').submit()</script>"
        return Self.page("""
            <p>Courier test wants to access your account: \(scope)</p>
            <form id="consent" method="post" action="/o/oauth2/v2/approve">\
            <input type="hidden" name="request" value="\(id)"><input type="hidden" name="decision" value="\(decision)">\
            <button>Continue</button></form>\(script)
            """, status: .ok)
    }

    private func approve(_ request: Request) async throws -> Response {
        var request = request
        let form = TokenServer.parseForm(String(decoding: try await request.collectBody(upTo: 16 << 10).readableBytesView, as: UTF8.self))
        let (pending, consent, code) = state.withLock { state -> (Pending?, Consent, String) in
            state.issued += 1
            let code = "4/code-s3kr1t-\(state.issued)-\(UUID().uuidString.prefix(8))"
            guard let id = form["request"], let pending = state.requests.removeValue(forKey: id) else { return (nil, state.consent, code) }
            if form["decision"] == "allow" { state.codes[code] = pending }
            return (pending, state.consent, code)
        }
        guard let pending else { return Self.page("Error 400: this consent request is unknown or used", status: .badRequest) }
        let state = consent == .wrongState ? "forged-\(pending.state)" : pending.state
        let query = form["decision"] == "allow" ? "code=\(Self.encode(code))&scope=\(Self.encode(pending.scope))" : "error=access_denied"
        return Response(status: .found, headers: [.location: "\(pending.redirectURI)?\(query)&state=\(Self.encode(state))"])
    }

    /// The `authorization_code` grant: the code once, for its client, redirect URI and verifier.
    func codeGrant(_ form: [String: String], tokens: TokenServer) -> Response {
        let pending = state.withLock { state -> Pending? in
            guard let code = form["code"], let pending = state.codes.removeValue(forKey: code) else { return nil }
            return pending
        }
        guard let pending, pending.clientID == form["client_id"], tokens.isClient(pending.clientID, secret: form["client_secret"]),
              pending.redirectURI == form["redirect_uri"], let verifier = form["code_verifier"],
              (43...128).contains(verifier.count), Self.challenge(of: verifier) == pending.challenge
        else {
            state.withLock { $0.refusedExchanges += 1 }
            return TokenServer.oauthError("invalid_grant", "Malformed auth code, or a code_verifier or redirect_uri that does not match.")
        }
        state.withLock { $0.exchanges += 1 }
        return grantUserTokens(clientID: pending.clientID, secret: form["client_secret"], scope: pending.scope, tokens: tokens)
    }

    private func grantUserTokens(clientID: String, secret: String?, scope: String, tokens: TokenServer) -> Response {
        let refreshToken = "1//refresh-s3kr1t-\(UUID().uuidString.prefix(12))"
        tokens.registerClient(id: clientID, secret: secret ?? "", refreshToken: refreshToken)
        return tokens.issue(scope: scope, refreshToken: refreshToken)
    }

    private func deviceCode(_ request: Request, tokens: TokenServer) async throws -> Response {
        var request = request
        let form = TokenServer.parseForm(String(decoding: try await request.collectBody(upTo: 16 << 10).readableBytesView, as: UTF8.self))
        guard let clientID = form["client_id"], tokens.isRegistered(clientID: clientID) else {
            return TokenServer.oauthError("invalid_client", "The OAuth client was not found.", status: .unauthorized)
        }
        guard let scope = form["scope"], !scope.isEmpty else { return TokenServer.oauthError("invalid_scope", "scope is required") }
        let (deviceCode, interval) = state.withLock { state -> (String, Int) in
            state.issued += 1
            let code = "AH-device-s3kr1t-\(state.issued)-\(UUID().uuidString.prefix(8))"
            state.devices[code] = (clientID, scope)
            return (code, state.deviceInterval)
        }
        let host = request.head.authority ?? "127.0.0.1"
        return NotesAPI.json(["device_code": deviceCode, "user_code": "CRUX-TEST", "verification_url": "http://\(host)/device",
                              "expires_in": 1800, "interval": interval]).hummingbirdResponse
    }

    /// The `device_code` grant: the next scripted answer, Google's status with each.
    func deviceGrant(_ form: [String: String], tokens: TokenServer) -> Response {
        enum Answer { case unknown, poll(DevicePoll, clientID: String, scope: String) }
        let answer = state.withLock { state -> Answer in
            state.polls += 1
            guard let code = form["device_code"], let device = state.devices[code], device.clientID == form["client_id"] else { return .unknown }
            let poll = state.devicePolls.isEmpty ? .approve : state.devicePolls.removeFirst()
            if poll == .approve { state.devices[code] = nil }
            return .poll(poll, clientID: device.clientID, scope: device.scope)
        }
        switch answer {
        case .unknown: return TokenServer.oauthError("invalid_grant", "Malformed device code.")
        case .poll(.pending, _, _): return TokenServer.oauthError("authorization_pending", "Precondition Required", status: .init(code: 428))
        case .poll(.slowDown, _, _): return TokenServer.oauthError("slow_down", "Forbidden", status: .forbidden)
        case .poll(.deny, _, _): return TokenServer.oauthError("access_denied", "Forbidden", status: .forbidden)
        case .poll(.expire, _, _): return TokenServer.oauthError("expired_token", "Bad Request")
        case .poll(.approve, let clientID, let scope):
            guard tokens.isClient(clientID, secret: form["client_secret"]) else {
                return TokenServer.oauthError("invalid_client", "Unauthorized", status: .unauthorized)
            }
            return grantUserTokens(clientID: clientID, secret: form["client_secret"], scope: scope, tokens: tokens)
        }
    }

    /// BASE64URL(SHA256(verifier)), computed apart from the client's PKCE code.
    static func challenge(of verifier: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(verifier.utf8)
        bytes.withUnsafeBytes { _ = courier_sha256($0.baseAddress, $0.count, &digest) }
        return Data(digest).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    private static func page(_ body: String, status: HTTPResponse.Status) -> Response {
        let html = "<!doctype html><html><head><meta charset=\"utf-8\"><title>Sign in</title></head><body>\(body)</body></html>"
        return Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
