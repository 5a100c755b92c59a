/// A query failed on the client side: its response could not be read, or the query itself is wrong.
///
/// ```swift
/// do { _ = try await service.execute(query) }
/// catch QueryError.malformedResponse { … }   // invalid or truncated JSON
/// ```
public struct QueryError: CodedError, Hashable {
    enum Code: String, Sendable {
        case malformedResponse, unexpectedResponse, missingParameter, invalidTemplate, invalidQuery, pageLimitReached, pagesNotMergeable
    }

    let code: Code
    public internal(set) var message = ""
    /// The underlying JSON error, for ``malformedResponse``.
    public internal(set) var jsonError: JSONParsingError? = nil
    /// How many pages were fetched, for ``pageLimitReached``.
    public internal(set) var pagesFetched: Int? = nil
    public var underlyingError: (any Error)? { jsonError }

    /// The response body is not the JSON it should be: malformed, truncated, or not UTF-8.
    public static let malformedResponse = QueryError(code: .malformedResponse)
    /// The JSON is well formed but not of the expected shape.
    public static let unexpectedResponse = QueryError(code: .unexpectedResponse)
    /// A path parameter is missing.
    public static let missingParameter = QueryError(code: .missingParameter)
    /// A path template that RFC 6570's grammar does not allow, or a prefix modifier on a list or
    /// an associative array (``URITemplate``); the message names the offset where it breaks.
    public static let invalidTemplate = QueryError(code: .invalidTemplate)
    /// The query cannot be sent as it is.
    public static let invalidQuery = QueryError(code: .invalidQuery)
    /// Fetching all pages stopped at the page limit while more remained (only with
    /// ``PagingPolicy/LimitBehavior/fail``; the default returns what was fetched).
    public static let pageLimitReached = QueryError(code: .pageLimitReached)
    /// `fetchAll` met a paged response whose items are not one list (``APIPage`` but not
    /// ``APICollection``) and more pages remain: walk them with ``ServiceActor/pages(of:)->QueryPages<Response>``.
    public static let pagesNotMergeable = QueryError(code: .pagesNotMergeable)
}
