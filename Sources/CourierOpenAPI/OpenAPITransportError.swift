/// A request ``CourierTransport`` could not make or finish: an invalid URL is refused before
/// anything is sent; a body that contradicts its declared length stops the upload there, and
/// such a request is never retried (its body cannot be read again).
public struct OpenAPITransportError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The server URL and the operation's path do not make a URL.
        case invalidURL
        /// The request body yielded more or fewer bytes than the `HTTPBody` declared.
        case bodyLengthMismatch
    }

    public let code: Code
    /// What was wrong, with any credential in a URL replaced.
    public let message: String

    public var description: String { "OpenAPITransportError.\(code.rawValue): \(message)" }
}
