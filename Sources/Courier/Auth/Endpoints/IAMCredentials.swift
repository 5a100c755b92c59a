import Foundation

/// Google's IAM Credentials API: short-lived tokens of a service account, for a caller allowed
/// to impersonate it (`roles/iam.serviceAccountTokenCreator`). The caller's own credentials
/// authorize the request; `delegates` is the chain of accounts in between, each allowed to
/// impersonate the next.
struct IAMCredentials: Sendable {
    /// `https://iamcredentials.googleapis.com` (or a test server).
    let endpoint: URL

    /// Refuses an endpoint that would carry the caller's token in clear text.
    init(endpoint: URL) throws(AuthError) {
        try CredentialRequest.requireSecure(endpoint, what: "IAM Credentials endpoint")
        self.endpoint = endpoint
    }

    /// The account in a `…/serviceAccounts/<email>:generateAccessToken` URL (a credentials
    /// file's `service_account_impersonation_url`) and the endpoint before `/v1/`.
    static func parse(impersonationURL text: String) throws(AuthError) -> (iam: IAMCredentials, account: String) {
        guard let url = URL(string: text), let range = text.range(of: "/v1/projects/-/serviceAccounts/"),
              let colon = text[range.upperBound...].lastIndex(of: ":")
        else {
            throw AuthError(.invalidCredentials, message: "service_account_impersonation_url is not an IAM Credentials URL")
        }
        guard let endpoint = URL(string: String(text[..<range.lowerBound])) else {
            throw AuthError(.invalidCredentials, message: "service_account_impersonation_url is not an IAM Credentials URL")
        }
        try CredentialRequest.requireSecure(url, what: "IAM Credentials endpoint")
        let account = String(text[range.upperBound..<colon]).removingPercentEncoding ?? String(text[range.upperBound..<colon])
        return (try IAMCredentials(endpoint: endpoint), account)
    }

    /// This endpoint in `source`'s universe: Google's (`iamcredentials.googleapis.com`) becomes
    /// `iamcredentials.<universe>`, so the source's token never goes to another universe's IAM;
    /// any other endpoint (a test server) is kept.
    func inUniverse(of source: any TokenAuthorizer, through service: ServiceActor?) async throws -> IAMCredentials {
        let universe = try await source.universeDomain(context: service.map { AuthorizationContext(service: $0) })
        let moved = UniverseDomain.root(endpoint, in: universe)
        return moved == endpoint ? self : try IAMCredentials(endpoint: moved)
    }

    private func post(_ account: String, method: String, body: JSONObject, authorizedBy source: any TokenAuthorizer,
                      through service: ServiceActor?) async throws -> JSONObject {
        let sourceToken = try await source.token(context: service.map { AuthorizationContext(service: $0) })
        let encoded = URITemplate.percentEncode(account, keep: { URITemplate.isUnreserved($0) || $0 == UInt8(ascii: "@") })
        var request = HTTPRequest(method: .post, url: endpoint.appendingPathComponent("v1/projects/-/serviceAccounts/\(encoded):\(method)"))
        request.timeouts = Timeouts(connect: .seconds(10), total: .seconds(30))
        request.headers["Authorization"] = "Bearer \(sourceToken.value)"
        request.headers["Content-Type"] = "application/json"
        if let quota = source.quotaProjectID { request.headers["x-goog-user-project"] = quota }
        request.body = .data(body.serialized())
        let response = try await CredentialRequest.send(request, name: "iamcredentials.\(method)", through: service)
        if response.status == 401 { await source.invalidateToken(sourceToken.value) }
        return try TokenEndpoint.object(of: response)
    }

    /// `generateAccessToken`: an access token of `account` for `scopes`, valid `lifetime`.
    func generateAccessToken(_ account: String, scopes: [String], delegates: [String], lifetime: Duration,
                             authorizedBy source: any TokenAuthorizer, through service: ServiceActor?) async throws -> AccessToken {
        let body = try await post(account, method: "generateAccessToken", body: [
            "scope": .array(scopes.map(JSONValue.string)), "delegates": .array(delegates.map(JSONValue.string)),
            "lifetime": .string("\(Int(min(max(lifetime.seconds, 0), 1e12)))s"),
        ], authorizedBy: source, through: service)
        guard let value = body["accessToken"]?.stringValue, !value.isEmpty else {
            throw AuthError(.tokenEndpoint, message: "generateAccessToken answered without accessToken")
        }
        let expiresAt = body["expireTime"]?.stringValue.flatMap(RFC3339.parse)
        return AccessToken(value: value, expiresAt: expiresAt, scopes: scopes)
    }

    /// `signBlob`: `data` signed with a Google-held key of `account` (RSASSA-PKCS1-v1_5, SHA-256).
    func signBlob(_ account: String, _ data: Data, delegates: [String],
                  authorizedBy source: any TokenAuthorizer, through service: ServiceActor?) async throws -> Data {
        let body = try await post(account, method: "signBlob", body: [
            "payload": .string(data.base64EncodedString()), "delegates": .array(delegates.map(JSONValue.string)),
        ], authorizedBy: source, through: service)
        guard let encoded = body["signedBlob"]?.stringValue, let signature = Data(base64Encoded: encoded), !signature.isEmpty else {
            throw AuthError(.tokenEndpoint, message: "signBlob answered without signedBlob")
        }
        return signature
    }

    /// `generateIdToken`: an ID token of `account` for `audience`.
    func generateIDToken(_ account: String, audience: String, delegates: [String], includeEmail: Bool,
                         authorizedBy source: any TokenAuthorizer, through service: ServiceActor?) async throws -> AccessToken {
        let body = try await post(account, method: "generateIdToken", body: [
            "audience": .string(audience), "delegates": .array(delegates.map(JSONValue.string)), "includeEmail": .bool(includeEmail),
        ], authorizedBy: source, through: service)
        guard let value = body["token"]?.stringValue, !value.isEmpty else {
            throw AuthError(.tokenEndpoint, message: "generateIdToken answered without token")
        }
        return try IDToken.accessToken(value)
    }
}

/// OpenID Connect ID tokens: JWTs whose `exp` says when they expire.
enum IDToken {
    /// `jwt` as a token, expiring at its `exp` claim.
    static func accessToken(_ jwt: String) throws(AuthError) -> AccessToken {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Data(anyBase64: String(parts[1])),
              let claims = (try? JSONValue(parsing: payload))?.objectValue
        else { throw AuthError(.tokenEndpoint, message: "the ID token is not a JWT") }
        let expiresAt = claims["exp"]?.doubleValue.map { Date(timeIntervalSince1970: $0) }
        return AccessToken(value: jwt, expiresAt: expiresAt)
    }
}
