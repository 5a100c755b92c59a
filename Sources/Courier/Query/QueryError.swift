/// A query failed on the client side: its response could not be read, or the query itself is wrong.
///
/// ```swift
/// do { _ = try await service.execute(query) }
/// catch QueryError.malformedResponse { … }   // invalid or truncated JSON
/// ```
public struct QueryError: CourierError, Hashable {
    enum Code: String, Sendable {
        case malformedResponse, unexpectedResponse, missingParameter, invalidQuery, pageLimitReached, pagesNotMergeable
    }

    let code: Code
    public let message: String
    /// The underlying JSON error, for ``malformedResponse``.
    public let jsonError: JSONParsingError?
    /// How many pages were fetched, for ``pageLimitReached``.
    public let pagesFetched: Int?
    public var kind: String { code.rawValue }
    public var underlyingError: (any Error)? { jsonError }

    init(_ code: Code, message: String, jsonError: JSONParsingError? = nil, pagesFetched: Int? = nil) {
        self.code = code
        self.message = message
        self.jsonError = jsonError
        self.pagesFetched = pagesFetched
    }

    /// The response body is not the JSON it should be: malformed, truncated, or not UTF-8.
    public static let malformedResponse = QueryError(.malformedResponse, message: "")
    /// The JSON is well formed but not of the expected shape.
    public static let unexpectedResponse = QueryError(.unexpectedResponse, message: "")
    /// A path parameter is missing.
    public static let missingParameter = QueryError(.missingParameter, message: "")
    /// The query cannot be sent as it is.
    public static let invalidQuery = QueryError(.invalidQuery, message: "")
    /// Fetching all pages stopped at the page limit while more remained (only with
    /// ``PagingPolicy/LimitBehavior/fail``; the default returns what was fetched).
    public static let pageLimitReached = QueryError(.pageLimitReached, message: "")
    /// `fetchAll` met a paged response whose items are not one list (``APIPage`` but not
    /// ``APICollection``) and more pages remain: walk them with ``ServiceActor/pages(of:)->QueryPages<Response>``.
    public static let pagesNotMergeable = QueryError(.pagesNotMergeable, message: "")

}
