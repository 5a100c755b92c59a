import CourierSync
import Foundation
import HTTPTypes
import Hummingbird

/// A fake of Google's Security Token Service (`POST /sts/v1/token`, RFC 8693 token exchange)
/// for workload identity federation, and a subject-token URL (`GET /sts/subject-token`) that
/// serves the current external token as JSON (`{"id_token": …}`) to requests with
/// `Metadata: true` (as Azure's IMDS wants).
///
/// A subject token is accepted only if registered (``issueSubjectToken()``) for the configured
/// ``audience``; access tokens come from the test server's ``TokenServer``.
public final class STSFake: Sendable {
    struct State {
        var audience = "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/test"
        var subjectTokens: Set<String> = []
        var current: String?
        var issued = 0
        var exchanges = 0
        var requests = 0
        var lastScope: String?
        var lastOptions: String?
        var lastBasicAuth: String?
        var subjectTokenReads = 0
    }

    private let state = LockedValue(State())
    private let tokens: TokenServer
    /// AWS's metadata service, and its check of the signed requests AWS subject tokens are.
    public let aws = AWSFake()

    init(tokens: TokenServer) {
        self.tokens = tokens
    }

    /// The workload identity pool provider exchanges must name.
    public var audience: String { state.withLock { $0.audience } }
    /// Successful exchanges.
    public var exchangeCount: Int { state.withLock { $0.exchanges } }
    /// Exchange requests, failed ones included.
    public var requestCount: Int { state.withLock { $0.requests } }
    public var lastScope: String? { state.withLock { $0.lastScope } }
    /// The `options` form field of the last exchange (workforce pools' user project).
    public var lastOptions: String? { state.withLock { $0.lastOptions } }
    /// The client ID of the last exchange's Basic authorization, if any.
    public var lastClientID: String? { state.withLock { $0.lastBasicAuth } }
    public var subjectTokenReads: Int { state.withLock { $0.subjectTokenReads } }

    /// A new external token (a file or URL source serves it) that the exchange accepts.
    public func issueSubjectToken() -> String {
        state.withLock { state in
            state.issued += 1
            let token = "external-s3kr1t-\(state.issued)-\(UUID().uuidString.prefix(8))"
            state.subjectTokens.insert(token)
            state.current = token
            return token
        }
    }

    func add(to router: Router<BasicRequestContext>) {
        router.post("/sts/v1/token") { request, _ in try await self.exchange(request) }
        router.post("/sts/v1/oauthtoken") { request, _ in try await self.refresh(request) }
        aws.add(to: router)
        router.get("/sts/subject-token") { request, _ in
            guard request.headers[HTTPField.Name("Metadata")!] == "true",
                  let token = self.state.withLock({ state -> String? in
                      state.subjectTokenReads += 1
                      return state.current
                  })
            else { return TokenServer.oauthError("invalid_request", "Metadata: true is required") }
            return NotesAPI.json(["id_token": token]).hummingbirdResponse
        }
    }

    /// STS's refresh of a workforce user's token (`external_account_authorized_user`): the
    /// refresh grant, with the client as HTTP Basic (never in the form).
    private func refresh(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 64 << 10)
        var form = TokenServer.parseForm(String(decoding: body.readableBytesView, as: UTF8.self))
        guard form["client_id"] == nil, form["client_secret"] == nil, let header = request.headers[.authorization], header.hasPrefix("Basic "),
              let decoded = Data(base64Encoded: String(header.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) }),
              let colon = decoded.firstIndex(of: ":")
        else { return TokenServer.oauthError("invalid_client", "client authentication must be HTTP Basic", status: .unauthorized) }
        form["client_id"] = String(decoded[..<colon])
        form["client_secret"] = String(decoded[decoded.index(after: colon)...])
        state.withLock { state in
            state.requests += 1
            state.lastBasicAuth = form["client_id"]
        }
        return tokens.refreshGrant(form)
    }

    private func exchange(_ request: Request) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 64 << 10)
        let form = TokenServer.parseForm(String(decoding: body.readableBytesView, as: UTF8.self))
        state.withLock { $0.requests += 1 }
        if let failed = try await TokenServer.respond(to: tokens.nextFailure()) { return failed }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange",
              form["requested_token_type"] == "urn:ietf:params:oauth:token-type:access_token",
              form["subject_token_type"]?.hasPrefix("urn:ietf:params:oauth:token-type:") == true
                || form["subject_token_type"] == "urn:ietf:params:aws:token-type:aws4_request"
        else { return TokenServer.oauthError("invalid_request", "not a token exchange for an access token") }
        let basic = request.headers[.authorization].flatMap { header -> String? in
            guard header.hasPrefix("Basic "), let data = Data(base64Encoded: String(header.dropFirst(6))) else { return nil }
            return String(decoding: data, as: UTF8.self).split(separator: ":").first.map(String.init)
        }
        let accepted = state.withLock { state -> Bool in
            guard form["audience"] == state.audience, let subject = form["subject_token"] else { return false }
            // An AWS subject token is a signed request, checked as AWS would; the others were issued here.
            let valid = form["subject_token_type"] == "urn:ietf:params:aws:token-type:aws4_request"
                ? aws.verify(subject, audience: state.audience) : state.subjectTokens.contains(subject)
            guard valid else { return false }
            state.exchanges += 1
            state.lastScope = form["scope"]
            state.lastOptions = form["options"]
            state.lastBasicAuth = basic
            return true
        }
        guard accepted else { return TokenServer.oauthError("invalid_grant", "The subject token or audience is not valid.") }
        let (token, lifetime) = tokens.mint(scope: form["scope"])
        return NotesAPI.json([
            "access_token": token, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            "token_type": "Bearer", "expires_in": Int(lifetime),
        ]).hummingbirdResponse
    }
}
