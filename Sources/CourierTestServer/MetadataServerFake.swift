import CourierSync
import Foundation
import HTTPTypes
import Hummingbird

/// A fake of the Compute Engine metadata server on the test server's main listener: point
/// `GCE_METADATA_HOST` at `127.0.0.1:<port>`.
///
/// Like the real one it answers only requests that carry `Metadata-Flavor: Google` (others get
/// 403, as do proxied ones with `X-Forwarded-For`), and its answers carry the same header.
/// Tokens come from the test server's ``TokenServer``, so the protected routes accept them.
///
/// Routes: `/` (what detection probes), `project/project-id`, `universe/universe-domain` (404
/// until ``setUniverseDomain(_:)``, as servers before universes answer),
/// `instance/service-accounts/<account>/{email,token,identity}` under `/computeMetadata/v1/`.
public final class MetadataServerFake: Sendable {
    /// How a scripted request misbehaves; each applies to one request, in order.
    public enum Fault: Sendable, Equatable {
        /// Answers after a delay (a VM's metadata server in its first seconds).
        case slow(milliseconds: Int)
        /// 500.
        case serverError
        /// Answers without `Metadata-Flavor: Google`: whatever this is, it is not the metadata server.
        case noFlavor
    }

    struct State {
        var projectID = "test-project"
        var email = "default@test-project.iam.gserviceaccount.com"
        var faults: [Fault] = []
        var requests = 0
        var probes = 0
        var tokenRequests = 0
        var identityRequests = 0
        var refused = 0
        var lastScopes: String?
        var universeDomain: String?
        var universeRequests = 0
    }

    private let state = LockedValue(State())
    private let tokens: TokenServer

    init(tokens: TokenServer) {
        self.tokens = tokens
    }

    /// The next requests misbehave in this order.
    public func failNext(_ faults: Fault...) { state.withLock { $0.faults += faults } }
    /// Requests answered (refused ones included).
    public var requestCount: Int { state.withLock { $0.requests } }
    /// Requests to `/`, which is what detection asks.
    public var probeCount: Int { state.withLock { $0.probes } }
    public var tokenRequestCount: Int { state.withLock { $0.tokenRequests } }
    public var identityRequestCount: Int { state.withLock { $0.identityRequests } }
    /// Requests refused for a missing `Metadata-Flavor` (or for `X-Forwarded-For`).
    public var refusedCount: Int { state.withLock { $0.refused } }
    /// The `scopes` parameter of the last token request.
    public var lastScopes: String? { state.withLock { $0.lastScopes } }
    public var projectID: String { state.withLock { $0.projectID } }
    /// What `universe/universe-domain` answers; nil: 404.
    public func setUniverseDomain(_ domain: String?) { state.withLock { $0.universeDomain = domain } }
    /// Requests to `universe/universe-domain`.
    public var universeRequestCount: Int { state.withLock { $0.universeRequests } }
    public var email: String { state.withLock { $0.email } }

    func add(to router: Router<BasicRequestContext>) {
        router.get("/") { request, _ in
            try await self.answer(request, probe: true) { ("computeMetadata/\n", "application/text") }
        }
        let v1 = router.group("/computeMetadata/v1")
        v1.get("project/project-id") { request, _ in
            try await self.answer(request) { (self.projectID, "application/text") }
        }
        v1.get("universe/universe-domain") { request, _ in
            try await self.answer(request) {
                let domain = self.state.withLock { state -> String? in
                    state.universeRequests += 1
                    return state.universeDomain
                }
                return domain.map { ($0, "application/text") }
            }
        }
        v1.get("instance/service-accounts/:account/email") { request, _ in
            try await self.answer(request) { (self.email, "application/text") }
        }
        v1.get("instance/service-accounts/:account/token") { request, _ in
            try await self.answer(request) {
                let scopes = request.uri.queryParameters.get("scopes")
                self.state.withLock { state in
                    state.tokenRequests += 1
                    state.lastScopes = scopes
                }
                let (token, lifetime) = self.tokens.mint(scope: scopes)
                let body = #"{"access_token":"\#(token)","expires_in":\#(Int(lifetime)),"token_type":"Bearer"}"#
                return (body, "application/json")
            }
        }
        v1.get("instance/service-accounts/:account/identity") { request, _ in
            guard let audience = request.uri.queryParameters.get("audience") else {
                return Response(status: .badRequest, headers: [.metadataFlavor: "Google"])
            }
            return try await self.answer(request) {
                self.state.withLock { $0.identityRequests += 1 }
                return (self.tokens.mintIDToken(audience: audience, email: self.email), "text/html; charset=utf-8")
            }
        }
    }

    /// `body`'s text and content type, after the flavor check and the next scripted fault; a
    /// nil body is a 404, as a path the server does not know.
    private func answer(_ request: Request, probe: Bool = false, _ body: () -> (String, String)?) async throws -> Response {
        let refused = request.headers[.metadataFlavor] != "Google" || request.headers[.forwardedFor] != nil
        let fault = state.withLock { state -> Fault? in
            state.requests += 1
            if probe { state.probes += 1 }
            if refused { state.refused += 1 }
            return refused || state.faults.isEmpty ? nil : state.faults.removeFirst()
        }
        if refused {
            return Response(status: .forbidden, headers: [.metadataFlavor: "Google"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "Missing required header: Metadata-Flavor\n")))
        }
        var headers: HTTPFields = [.metadataFlavor: "Google"]
        switch fault {
        case .slow(let milliseconds)?: try await Task.sleep(for: .milliseconds(milliseconds))
        case .serverError?: return Response(status: .internalServerError, headers: headers)
        case .noFlavor?: headers = [:]
        case nil: break
        }
        guard let (text, contentType) = body() else { return Response(status: .notFound, headers: headers) }
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

extension HTTPField.Name {
    static let metadataFlavor = HTTPField.Name("Metadata-Flavor")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
}
