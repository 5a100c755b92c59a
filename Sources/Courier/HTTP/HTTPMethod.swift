/// An HTTP request method.
///
/// The common methods are static members; any other RFC 9110 token can be spelled out with
/// ``init(rawValue:)``. A method that is not a valid token is rejected before anything is sent.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    public var description: String { rawValue }

    /// Whether repeating the request has the same effect as sending it once (RFC 9110 §9.2.2).
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options: true
        default: false
        }
    }

    /// GET first: comparing a small string is a compare of two words, where walking its bytes
    /// cost about 90 instructions of every request.
    var isValidToken: Bool {
        rawValue == "GET" || !rawValue.isEmpty && HTTPSyntax.all(rawValue, are: HTTPSyntax.isTokenByte)
    }
}
