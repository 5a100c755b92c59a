/// A failure below HTTP: the request could not be sent, or no complete response came back.
///
/// Match on the kind with the static members; two errors are equal when their kinds are:
///
/// ```swift
/// do {
///     _ = try await service.send(request)
/// } catch TransportError.timedOut {
///     // retry later
/// } catch let error as TransportError where error == .connectionFailed {
///     print(error.curlCode ?? 0, error.message)
/// }
/// ```
///
/// URLs in errors have their credentials (`key=`, `access_token=` …) replaced by `_snip_`.
public struct TransportError: CodedError, Hashable {
    enum Code: String, Sendable, Hashable {
        case timedOut, connectionFailed, hostNotFound, tlsFailure, connectionLost, bodyTooLarge
        case cancelled, shutdown, invalidRequest, tooManyRedirects, fileError, protocolError
        case headerTooLarge, bodyLengthMismatch, unknown
    }

    let code: Code
    /// libcurl's `CURLcode`, when libcurl reported the failure.
    public let curlCode: Int?
    /// What went wrong, in words.
    public let message: String
    /// The request URL, redacted.
    public let url: String?
    /// Whether the server may have received the request. False only when Courier knows no byte
    /// of it left: the connect, the name lookup or the TLS handshake failed, or the request was
    /// never handed to the connection. Retrying a request that may have arrived is safe only for
    /// idempotent requests (see ``Idempotency``).
    public internal(set) var requestMayHaveBeenSent: Bool

    init(_ code: Code, curlCode: Int? = nil, message: String = "", url: String? = nil) {
        self.code = code
        self.curlCode = curlCode
        self.message = message
        self.url = url.map(Redaction.url)
        switch code {
        case .connectionFailed, .hostNotFound, .tlsFailure, .invalidRequest, .shutdown: requestMayHaveBeenSent = false
        default: requestMayHaveBeenSent = true
        }
    }

    /// The deadline or the connect or idle timeout passed.
    public static let timedOut = TransportError(.timedOut)
    /// No connection could be made (refused, unreachable).
    public static let connectionFailed = TransportError(.connectionFailed)
    /// The host name did not resolve.
    public static let hostNotFound = TransportError(.hostNotFound)
    /// The TLS handshake or certificate verification failed.
    public static let tlsFailure = TransportError(.tlsFailure)
    /// The connection was reset or closed before the response was complete.
    public static let connectionLost = TransportError(.connectionLost)
    /// The response body exceeded the configured maximum.
    public static let bodyTooLarge = TransportError(.bodyTooLarge)
    /// The transfer was cancelled other than through Task cancellation (which throws `CancellationError`).
    public static let cancelled = TransportError(.cancelled)
    /// The service was shut down.
    public static let shutdown = TransportError(.shutdown)
    /// The request cannot be sent as it is (bad URL, method or header).
    public static let invalidRequest = TransportError(.invalidRequest)
    /// Redirects went past the configured maximum.
    public static let tooManyRedirects = TransportError(.tooManyRedirects)
    /// A local file could not be read or written.
    public static let fileError = TransportError(.fileError)
    /// The peer broke the HTTP protocol.
    public static let protocolError = TransportError(.protocolError)
    /// The response header block exceeded libcurl's limit.
    public static let headerTooLarge = TransportError(.headerTooLarge)
    /// A streamed request body yielded more or fewer bytes than the length it declared. The
    /// transfer is aborted before the body's last byte, so the server never holds a cut body.
    public static let bodyLengthMismatch = TransportError(.bodyLengthMismatch)

    /// Whether sending again may succeed: resets, timeouts and failed connects.
    public var isTransient: Bool {
        switch code {
        case .timedOut, .connectionFailed, .connectionLost: true
        default: false
        }
    }

    func with(message: String) -> TransportError {
        var error = TransportError(code, curlCode: curlCode, message: message, url: url)
        error.requestMayHaveBeenSent = requestMayHaveBeenSent
        return error
    }
}

extension TransportError {
    public var description: String {
        var text = "TransportError.\(code.rawValue)"
        if let curlCode { text += " (curl \(curlCode))" }
        if !message.isEmpty { text += ": \(message)" }
        if let url { text += " [\(url)]" }
        return text
    }
}
