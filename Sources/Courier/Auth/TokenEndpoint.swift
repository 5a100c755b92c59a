import CourierSync
import Foundation
import Synchronization

/// Talks to an OAuth 2 token endpoint: posts a form, reads the token or a typed error.
final class TokenEndpoint: Sendable {
    let url: URL
    /// Released with the endpoint; a service of its own then stops its loop in `deinit`.
    private let transport: LockedValue<ServiceActor?>

    /// `transport` nil: a small service of its own is started on first use.
    init(url: URL, transport: ServiceActor?) throws(AuthError) {
        try Self.requireSecure(url)
        self.url = url
        self.transport = LockedValue(transport)
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

    private func service() throws -> ServiceActor {
        try transport.withLock { service in
            if let service { return service }
            var configuration = ServiceActor.Configuration()
            configuration.timeouts = Timeouts(connect: .seconds(10), total: .seconds(30))
            let created = try ServiceActor(configuration: configuration)
            service = created
            return created
        }
    }

    /// Posts `form` and returns the token, or a typed error.
    func requestToken(form: [(String, String)], scopes: [String]) async throws(AuthError) -> (AccessToken, JSONObject) {
        var request = HTTPRequest(method: .post, url: url)
        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        request.headers["Accept"] = "application/json"
        request.body = .data(Data(form.map {
            URITemplate.percentEncode($0.0, keep: URITemplate.isUnreserved) + "="
                + URITemplate.percentEncode($0.1, keep: URITemplate.isUnreserved)
        }.joined(separator: "&").utf8))
        let response: HTTPResponse
        do {
            response = try await service().send(request)
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
}
