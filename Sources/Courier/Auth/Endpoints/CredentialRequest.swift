import Foundation

/// Sends the requests credentials are made of — token endpoints, the metadata server, STS,
/// IAM Credentials, subject-token URLs — through the pipeline of the service whose query needs
/// them, so they keep that service's promises (retries by the same rules, the test handler,
/// logging with secrets snipped) and no second transport or thread exists. Outside any service
/// (a direct `currentToken()` call), a short-lived service carries the one request and stops.
///
/// Every such request is safe to repeat (it creates nothing), so each counts as idempotent.
/// They skip the service's limiter: the request waiting for the credentials may hold its last slot.
enum CredentialRequest {
    /// Sends `prepare(attempt)`'s request (attempt 0 first) and returns any HTTP answer;
    /// transport failures, after the policy's retries, become ``AuthError/transport``.
    static func send(name: String, through service: ServiceActor?, retry: RetryPolicy? = nil,
                     prepare: @escaping @Sendable (_ attempt: Int) -> HTTPRequest) async throws(AuthError) -> HTTPResponse {
        do {
            if let service { return try await send(name: name, service: service, retry: retry, prepare: prepare) }
            return try await withService { try await send(name: name, service: $0, retry: retry, prepare: prepare) }
        } catch let error as AuthError {
            throw error
        } catch is CancellationError {
            throw AuthError(.cancelled, message: "the \(name) request was cancelled")
        } catch {
            throw AuthError(.transport, message: "\(name) unreachable: \(error)", underlying: error)
        }
    }

    static func send(_ request: HTTPRequest, name: String, through service: ServiceActor?,
                     retry: RetryPolicy? = nil) async throws(AuthError) -> HTTPResponse {
        try await send(name: name, through: service, retry: retry) { _ in request }
    }

    private static func send(name: String, service: ServiceActor, retry: RetryPolicy?,
                             prepare: @Sendable (Int) -> HTTPRequest) async throws -> HTTPResponse {
        var context = service.rawContext(RequestOptions(name: name), operation: .token, retry: retry ?? service.configuration.retry)
        context.limited = false
        var attempt = 0
        return try await service.pipeline(context).run(BufferedTransmission()) {
            var request = prepare(attempt)
            attempt += 1
            request.idempotency = .always
            return request
        }
    }

    /// A form-encoded body (`application/x-www-form-urlencoded`).
    static func form(_ fields: [(String, String)]) -> Data {
        Data(fields.map {
            URITemplate.percentEncode($0.0, keep: URITemplate.isUnreserved) + "="
                + URITemplate.percentEncode($0.1, keep: URITemplate.isUnreserved)
        }.joined(separator: "&").utf8)
    }

    /// Only https, or plain http to loopback (tests, local emulators), may carry credentials.
    static func requireSecure(_ url: URL, what: String) throws(AuthError) {
        let scheme = url.scheme?.lowercased()
        let host = url.host?.lowercased() ?? ""
        let loopback = host == "127.0.0.1" || host == "::1" || host == "[::1]" || host == "localhost"
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw AuthError(.insecureEndpoint, message: "\(what) \(Redaction.url(url.absoluteString)) is not https")
        }
    }
}
