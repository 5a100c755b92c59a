import Foundation

/// Talks to an OAuth 2 token endpoint (RFC 6749) or an STS endpoint (RFC 8693): posts a form,
/// reads the token or a typed error. Requests go through ``CredentialRequest``.
struct TokenEndpoint: Sendable {
    let url: URL

    init(url: URL) throws(AuthError) {
        try CredentialRequest.requireSecure(url, what: "token endpoint")
        self.url = url
    }

    /// Token endpoints must be https: only loopback may use plain http (tests, local emulators).
    static func requireSecure(_ url: URL) throws(AuthError) {
        try CredentialRequest.requireSecure(url, what: "token endpoint")
    }

    /// Posts `form` and returns the response's JSON object, or a typed error. Transient
    /// failures are retried by the service's policy; `invalid_grant` and other 4xx are final.
    /// - Parameter trustedCA: A CA bundle the endpoint's certificate is verified against instead of the service's.
    func post(form: [(String, String)], headers: [String: String] = [:], name: String = "oauth2.token", trustedCA: String? = nil,
              through service: ServiceActor?) async throws(AuthError) -> JSONObject {
        var request = HTTPRequest(method: .post, url: url)
        request.trustedCAPath = trustedCA
        request.timeouts = Timeouts(connect: .seconds(10), total: .seconds(30))
        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        request.headers["Accept"] = "application/json"
        for (name, value) in headers { request.headers[name] = value }
        request.body = .data(CredentialRequest.form(form))
        let response = try await CredentialRequest.send(request, name: name, through: service)
        return try Self.object(of: response)
    }

    /// The JSON object of a 2xx answer, or the OAuth error it carries, typed.
    static func object(of response: HTTPResponse) throws(AuthError) -> JSONObject {
        let body = (try? JSONValue(parsing: response.body))?.objectValue
        guard (200..<300).contains(response.status) else {
            let oauthError = body?["error"]?.stringValue
                ?? body?["error"]?.objectValue?["status"]?.stringValue // Google's API error shape (IAM)
            let description = body?["error_description"]?.stringValue
                ?? body?["error"]?.objectValue?["message"]?.stringValue ?? HTTPStatus.reason(response.status)
            let code: AuthError.Code = switch oauthError {
            case "invalid_grant": .invalidGrant
            case "invalid_client", "unauthorized_client": .invalidClient
            case "PERMISSION_DENIED" where response.status == 403: .permissionDenied
            default: .tokenEndpoint
            }
            throw AuthError(code, message: description, oauthError: oauthError, status: response.status)
        }
        guard let body else {
            throw AuthError(.tokenEndpoint, message: "the token response is not a JSON object", status: response.status)
        }
        return body
    }

    /// Posts `form` and returns the access token (`access_token`, `expires_in`, `scope`) and the
    /// whole answer.
    func requestToken(form: [(String, String)], scopes: [String], headers: [String: String] = [:],
                      name: String = "oauth2.token", trustedCA: String? = nil, through service: ServiceActor?, now: Date = Date()) async throws(AuthError)
        -> (AccessToken, JSONObject)
    {
        let body = try await post(form: form, headers: headers, name: name, trustedCA: trustedCA, through: service)
        return (try Self.accessToken(in: body, scopes: scopes, now: now), body)
    }

    /// - Parameter now: When the answer came, on the authorizer's clock (`expires_in` counts from it).
    static func accessToken(in body: JSONObject, scopes: [String], now: Date) throws(AuthError) -> AccessToken {
        guard let value = body["access_token"]?.stringValue, !value.isEmpty else {
            throw AuthError(.tokenEndpoint, message: "the token response has no access_token")
        }
        let expiresAt = body["expires_in"]?.doubleValue.map { now.addingTimeInterval($0) }
        let granted = body["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) } ?? scopes
        return AccessToken(value: value, expiresAt: expiresAt, scopes: granted)
    }
}
