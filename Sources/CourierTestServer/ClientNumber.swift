import HTTPTypes
import Hummingbird

/// Numbers a client chooses, in a path, a query or a header, that the server then uses as a
/// status, a size, a count or an offset.
///
/// `courier serve` answers whoever reaches it, and such a number used unchecked traps the whole
/// process: a status of 1000 (HTTPTypes' precondition), a negative prefix, an inverted range, a
/// size doubled past `Int.max`. Each one is read here and refused with a 400 that names it.
enum ClientNumber {
    /// HTTP's status codes: three digits (RFC 9110 §15), none defined below 100.
    static let status = 100...999
    static let nonNegative = 0...Int.max
    /// A body the server builds in memory at once: at most 16 MiB, as `/json/{size}`.
    static let inMemory = 0...(16 << 20)

    /// `text` as a whole number in `range`.
    static func require(_ text: some StringProtocol, _ name: String, in range: ClosedRange<Int>) throws(ClientNumberError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ClientNumberError(name: name, text: String(text), range: range)
        }
        return value
    }

    /// `text` as a whole number in `range`; nil when the client sent none.
    static func parse(_ text: (some StringProtocol)?, _ name: String, in range: ClosedRange<Int>) throws(ClientNumberError) -> Int? {
        guard let text else { return nil }
        return try require(text, name, in: range)
    }
}

/// A client's number out of its range: a 400 in Google's error format, from a route (thrown) or
/// from the Notes and Files APIs' handlers (``apiResponse``).
struct ClientNumberError: HTTPResponseError {
    var name: String
    var text: String
    var range: ClosedRange<Int>

    var message: String {
        let upper = range.upperBound == .max ? "" : " to \(range.upperBound)"
        return "\(name) is \(text.prefix(40)): it must be a whole number from \(range.lowerBound)\(upper)"
    }

    var apiResponse: APIResponse { NotesAPI.error(400, "invalid", message) }

    var status: HTTPResponse.Status { .badRequest }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        apiResponse.hummingbirdResponse
    }
}
