import Foundation
import Synchronization

/// One API call: method, path template, parameters, body and how to execute it. Executing it
/// returns a typed `Response`.
///
/// ```swift
/// var list = Query<NoteList>(api: notesAPI, name: "notes.list", method: .get, path: "notes")
/// list.parameters.set("maxResults", 50)
/// list.fields = "items(id,title),nextPageToken"
/// let page = try await service.execute(list)
/// ```
///
/// The service copies the query when it executes it, so changing a query afterwards does not
/// affect a request in flight.
public struct Query<Response: QueryResponse>: Sendable {
    public var api: APIDescription
    /// The method's full name (`storage.objects.list`), for logs, events and metrics.
    public var name: String
    public var method: HTTPMethod
    /// RFC 6570 template, relative to the API's service path; a leading `/` makes it relative to the root URL.
    public var path: URITemplate
    /// Values for the path template's variables.
    public var pathParameters: [String: String]
    /// URL query parameters.
    public var parameters: QueryParameters
    /// The JSON body; an object's explicit nulls are sent (a patch clears those fields).
    public var body: JSONValue?
    /// Partial response selector (`items(id,title),nextPageToken`).
    public var fields: String?
    /// The ETag of the resource this query depends on: sent as `If-None-Match` on GET and as
    /// `If-Match` on PUT, PATCH and DELETE (unless it is a weak `W/` tag).
    public var etag: String?
    /// Ask for the resource's content (`alt=media`) rather than its metadata.
    public var downloadsMedia: Bool
    /// Download media from the API's download service (`<root>download/<service path>…`), as the
    /// document's `useMediaDownloadService` asks: no redirect on the way to the bytes.
    public var usesMediaDownloadService: Bool
    /// Extra request headers.
    public var headers: HTTPHeaders
    /// Identifies this execution: `service.cancel(requestID:)` cancels it, and batches key results by it.
    public var requestID: String
    /// What this query overrides of the service's settings.
    public var execution: ExecutionParameters
    /// The parameters every Google API takes (`quotaUser`, …).
    public var standardParameters: StandardParameters
    /// Media to upload with the query: set it for methods that take media (GTLR's
    /// `uploadParameters`). Executing the query then uploads (see `Docs/Uploads.md`).
    public var upload: UploadParameters?
    /// Where uploads go: `/upload/storage/v1/b/{bucket}/o`, relative to the root URL.
    public var uploadPath: URITemplate?
    /// The MIME types and size the method accepts as media, checked before an upload starts.
    public var mediaUploadLimits: MediaUploadLimits?
    /// How the API's owner classes this method for retry (generated from the API's table); nil
    /// keeps HTTP's rule by method and precondition. See ``MethodIdempotency``.
    public var methodIdempotency: MethodIdempotency?
    /// The URL parameter by which the API recognises a repeated request and ignores it (AIP-155's
    /// `requestId`, as Compute Engine and some 100 other Google APIs take it). When the query
    /// leaves it unset, Courier sets a new random UUID each time the query is executed, before the
    /// first attempt, so every retry of that execution carries the same one; with it set, the
    /// request is safe to repeat and is re-sent after a failure that may have reached the server.
    /// Generated clients set it where the API's Discovery document says the server deduplicates.
    /// See ``MethodIdempotency``.
    public var deduplicationParameter: String?

    public init(api: APIDescription, name: String, method: HTTPMethod = .get, path: URITemplate,
                pathParameters: [String: String] = [:], parameters: QueryParameters = [:], body: JSONValue? = nil) {
        self.api = api
        self.name = name
        self.method = method
        self.path = path
        self.pathParameters = pathParameters
        self.parameters = parameters
        self.body = body
        self.fields = nil
        self.etag = nil
        self.downloadsMedia = false
        self.usesMediaDownloadService = false
        self.headers = [:]
        self.requestID = RequestID.next()
        self.execution = ExecutionParameters()
        self.standardParameters = StandardParameters()
        self.upload = nil
        self.uploadPath = nil
        self.mediaUploadLimits = nil
        self.methodIdempotency = nil
        self.deduplicationParameter = nil
    }

    /// Whether executing the query uploads media.
    public var isUpload: Bool { upload != nil }

    /// Sets the body to an object's JSON.
    public mutating func setBody(_ object: some APIObject) {
        body = .object(object.json)
    }

    /// The same query with `pageToken` set, for the next page.
    public func nextPage(token: String) -> Query {
        var copy = self
        copy.parameters.set("pageToken", token)
        return copy
    }
}

/// Unique request IDs for the process: `courier-1`, `courier-2`, …
enum RequestID {
    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        format(nextNumber())
    }

    static func nextNumber() -> UInt64 {
        counter.add(1, ordering: .relaxed).newValue
    }

    static func format(_ number: UInt64) -> String {
        "courier-\(number)"
    }
}

/// What a query can decode its response into.
///
/// API objects decode with Courier's JSON parser (keeping unknown fields); plain `Decodable`
/// types opt in with an empty conformance and decode with `JSONDecoder`:
///
/// ```swift
/// struct Status: Decodable, QueryResponse { var ok: Bool }
/// ```
public protocol QueryResponse: Sendable {
    /// Builds the value from a 2xx response.
    static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> Self
}

extension QueryResponse where Self: APIObject {
    public static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> Self {
        Self(json: try JSONObject(responseBody: response.body, limits: limits))
    }
}

extension JSONValue {
    /// The JSON a response's body holds, or ``QueryError/malformedResponse`` saying why it is not JSON.
    init(responseBody body: Data, limits: JSONLimits) throws(QueryError) {
        do {
            self = try JSONValue(parsing: body, limits: limits)
        } catch {
            throw QueryError(code: .malformedResponse, message: "the response is not valid JSON: \(error)", jsonError: error)
        }
    }
}

extension JSONObject {
    /// The object a response's body holds, or a typed error saying why it holds none.
    init(responseBody body: Data, limits: JSONLimits) throws(QueryError) {
        let value = try JSONValue(responseBody: body, limits: limits)
        guard case .object(let object) = value else {
            throw QueryError(code: .unexpectedResponse, message: "expected a JSON object, got \(value.kindName)")
        }
        self = object
    }
}

extension QueryResponse where Self: Decodable {
    public static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> Self {
        // Parse first: it yields typed, bounded errors for malformed, truncated or hostile JSON.
        _ = try JSONValue(responseBody: response.body, limits: limits)
        do {
            return try JSONDecoder().decode(Self.self, from: response.body)
        } catch {
            throw QueryError(code: .unexpectedResponse, message: "cannot decode \(Self.self): \(error)")
        }
    }
}

/// The response of a query that returns nothing (a DELETE's 204).
public struct NoContent: QueryResponse, Hashable {
    public init() {}
    public static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> NoContent { NoContent() }
}

/// Downloaded media: the bytes and their type (GTLR's `GTLRDataObject`).
public struct MediaData: QueryResponse, Hashable {
    public var data: Data
    public var contentType: String?

    public static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> MediaData {
        MediaData(data: response.body, contentType: response.headers["Content-Type"])
    }
}

extension JSONValue {
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
