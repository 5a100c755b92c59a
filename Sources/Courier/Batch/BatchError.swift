/// A query of a wire batch got no usable answer of its own: the batch response was broken
/// for it. (A query the server answered with an error status gets an ``APIError``.)
public struct BatchError: CodedError, Hashable {
    enum Code: String, Sendable {
        case missingResponse, malformedResponse, notAllowed, duplicateRequestID
    }

    let code: Code
    public internal(set) var message = ""

    /// The batch response has no part for this query (truncated, or a part without its Content-ID).
    public static let missingResponse = BatchError(code: .missingResponse)
    /// The part for this query, or the whole batch response, could not be read.
    public static let malformedResponse = BatchError(code: .malformedResponse)
    /// This query cannot travel in a wire batch (a media upload or download).
    public static let notAllowed = BatchError(code: .notAllowed)
    /// Two queries share a request ID, so their answers could not be told apart.
    public static let duplicateRequestID = BatchError(code: .duplicateRequestID)
}
