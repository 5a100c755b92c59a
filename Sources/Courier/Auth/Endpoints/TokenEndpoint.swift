import Foundation

/// Talks to an OAuth 2 token endpoint: posts a form, reads the token or a typed error.
///
/// The request goes through the pipeline of the service whose query needs the token, so it
/// keeps that service's promises (retries by the same rules, the test handler, logging with
/// secrets snipped) and no second transport or thread exists. Outside any service (a direct
/// `currentToken()` call), a short-lived service carries the one request and stops.
struct TokenEndpoint: Sendable {
    let url: URL

    init(url: URL) throws(AuthError) {
        try Self.requireSecure(url)
        self.url = url
    }

    /// Token endpoints must be https: only loopback may use plain http (tests, local emulators).
    static func requireSecure(_ url: URL) throws(AuthError) {
        let scheme = url.scheme?.lowercased()
        let host = url.host?.lowercased() ?? ""
        let loopback = host == "127.0.0.1" || host == "::1" || host == "[::1]" || host == "localhost"
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw AuthError(.insecureEndpoint, message: "token endpoint \(Redaction.url(url.absoluteString)) is not https")
        }
    }

    /// Posts `form` through `service` (or a short-lived one) and returns the token, or a typed
    /// error. Transient failures are retried by the service's policy; a token request is safe to
    /// repeat, so it counts as idempotent. `invalid_grant` and other 4xx answers are final.
    func requestToken(form: [(String, String)], scopes: [String], through service: ServiceActor?) async throws(AuthError)
        -> (AccessToken, JSONObject)
    {
        var request = HTTPRequest(method: .post, url: url)
        request.timeouts = Timeouts(connect: .seconds(10), total: .seconds(30))
        request.idempotency = .always
        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        request.headers["Accept"] = "application/json"
        request.body = .data(Data(form.map {
            URITemplate.percentEncode($0.0, keep: URITemplate.isUnreserved) + "="
                + URITemplate.percentEncode($0.1, keep: URITemplate.isUnreserved)
        }.joined(separator: "&").utf8))
        let response: HTTPResponse
        do {
            if let service {
                response = try await Self.send(request, through: service)
            } else {
                response = try await withService { try await Self.send(request, through: $0) }
            }
        } catch let error as AuthError {
            throw error
        } catch is CancellationError {
            throw AuthError(.cancelled, message: "the token request was cancelled")
        } catch let error as TransportError {
            throw AuthError(.transport, message: "token endpoint unreachable: \(error)")
        } catch {
            throw AuthError(.transport, message: "token endpoint unreachable: \(error)")
        }
        let body = (try? JSONValue(parsing: response.body))?.objectValue
        guard (200..<300).contains(response.status) else {
            let oauthError = body?["error"]?.stringValue
            let description = body?["error_description"]?.stringValue ?? HTTPStatus.reason(response.status)
            let code: AuthError.Code = switch oauthError {
            case "invalid_grant": .invalidGrant
            case "invalid_client", "unauthorized_client": .invalidClient
            default: .tokenEndpoint
            }
            throw AuthError(code, message: description, oauthError: oauthError, status: response.status)
        }
        guard let body, let value = body["access_token"]?.stringValue, !value.isEmpty else {
            throw AuthError(.tokenEndpoint, message: "the token response has no access_token", status: response.status)
        }
        let expiresAt = body["expires_in"]?.doubleValue.map { Date().addingTimeInterval($0) }
        let granted = body["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) } ?? scopes
        return (AccessToken(value: value, expiresAt: expiresAt, scopes: granted), body)
    }

    private static func send(_ request: HTTPRequest, through service: ServiceActor) async throws -> HTTPResponse {
        var context = service.rawContext(RequestOptions(name: "oauth2.token"), operation: .token, retry: service.configuration.retry)
        context.limited = false // the request waiting for this token may hold the last slot
        return try await service.pipeline(context).run(BufferedTransmission()) { request }
    }
}
