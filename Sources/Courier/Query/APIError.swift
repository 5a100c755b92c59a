import Foundation

/// The server answered with an error status. Google's JSON error body is parsed:
/// v1 (`code`, `message`, `errors[domain, reason, message, location]`) and v2 (`status`,
/// `details[@type …]`); any other body is kept as truncated text.
///
/// Match on the status in a `catch`, as the seeds' per-status error handlers did:
///
/// ```swift
/// do {
///     try await service.execute(query)
/// } catch APIError.notFound {
///     // 404
/// } catch APIError.status(412) {
///     // precondition failed: reload and retry
/// } catch let error as APIError where error.reason == "rateLimitExceeded" {
///     …
/// }
/// ```
public struct APIError: CourierError {
    /// One entry of a v1 error's `errors` array.
    public struct Item: Sendable, Hashable {
        public var domain: String?
        public var reason: String?
        public var message: String?
        public var location: String?
        public var locationType: String?
    }

    public let status: Int
    /// The error's message, or the start of a non-JSON body.
    public let message: String
    /// v2's canonical status name (`NOT_FOUND`, `PERMISSION_DENIED` …).
    public let statusName: String?
    /// v1's detail items.
    public let items: [Item]
    /// v2's typed details, each an object with an `@type`.
    public let details: [JSONObject]
    /// The whole `error` object, for anything else the server put in it.
    public let json: JSONObject?
    /// The response headers.
    public let headers: HTTPHeaders
    /// The query's request ID.
    public let requestID: String?

    /// The first item's reason (`notFound`, `rateLimitExceeded` …).
    public var reason: String? { items.first?.reason }

    init(status: Int, message: String, statusName: String? = nil, items: [Item] = [], details: [JSONObject] = [],
         json: JSONObject? = nil, headers: HTTPHeaders = [:], requestID: String? = nil) {
        self.status = status
        self.message = message
        self.statusName = statusName
        self.items = items
        self.details = details
        self.json = json
        self.headers = headers
        self.requestID = requestID
    }

    /// Reads Google's error format from `response`; falls back to up to 1 KiB of text on one line
    /// (``message``), or the status.
    public init(response: HTTPResponse, requestID: String? = nil) {
        if let value = try? JSONValue(parsing: response.body), let error = value["error"]?.objectValue {
            let items = (error["errors"]?.arrayValue ?? []).compactMap(\.objectValue).map {
                Item(domain: $0["domain"]?.stringValue, reason: $0["reason"]?.stringValue,
                     message: $0["message"]?.stringValue, location: $0["location"]?.stringValue,
                     locationType: $0["locationType"]?.stringValue)
            }
            self.init(status: response.status,
                      message: error["message"]?.stringValue ?? HTTPStatus.reason(response.status),
                      statusName: error["status"]?.stringValue,
                      items: items,
                      details: (error["details"]?.arrayValue ?? []).compactMap(\.objectValue),
                      json: error, headers: response.headers, requestID: requestID)
        } else {
            self.init(status: response.status, message: Self.textMessage(of: response), headers: response.headers, requestID: requestID)
        }
    }

    /// A non-JSON body as one line: a server's bytes reach logs and terminals, so control
    /// characters (escape sequences, line breaks that would forge a log line) become spaces, and
    /// a body that is not text is named by its size and type. Up to 1 KiB of text.
    static func textMessage(of response: HTTPResponse) -> String {
        let head = response.body.prefix(1024)
        guard !head.isEmpty else { return HTTPStatus.reason(response.status) }
        let scalars = String(decoding: head, as: UTF8.self).unicodeScalars
        // NUL, or many bytes that are not UTF-8 (a sequence cut at 1 KiB leaves one or two): binary.
        let undecodable = scalars.lazy.filter { $0 == "\u{FFFD}" }.count
        if head.contains(0) || undecodable > max(2, scalars.count / 10) {
            let type = response.headers["Content-Type"].map { " of \($0.prefix(100))" } ?? ""
            return "\(HTTPStatus.reason(response.status)) (\(response.body.count) bytes\(type), not text)"
        }
        var line = String.UnicodeScalarView()
        for scalar in scalars {
            line.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? " " : scalar)
        }
        let text = String(line).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? HTTPStatus.reason(response.status) : text
    }

    /// The first error item's reason (`notFound`, `rateLimitExceeded`), else Google's status name
    /// (`NOT_FOUND`), else `http<status>`: a stable label for metrics and logs.
    public var kind: String { reason ?? statusName ?? "http\(status)" }

    public var description: String {
        var text = "APIError \(status)"
        if let statusName { text += " \(statusName)" }
        if let reason { text += " (\(reason))" }
        return text + ": \(message)"
    }

    /// A pattern that matches an ``APIError`` by status, for `catch` clauses.
    public struct StatusPattern: Sendable {
        public let statuses: ClosedRange<Int>

        public static func ~= (pattern: StatusPattern, error: any Error) -> Bool {
            guard let error = error as? APIError else { return false }
            return pattern.statuses.contains(error.status)
        }
    }

    /// Matches one status: `catch APIError.status(409)`.
    public static func status(_ code: Int) -> StatusPattern { StatusPattern(statuses: code...code) }
    /// Matches a range: `catch APIError.statuses(500...599)`.
    public static func statuses(_ range: ClosedRange<Int>) -> StatusPattern { StatusPattern(statuses: range) }

    public static let notModified = status(304)
    public static let badRequest = status(400)
    public static let unauthorized = status(401)
    public static let forbidden = status(403)
    public static let notFound = status(404)
    public static let conflict = status(409)
    public static let preconditionFailed = status(412)
    public static let tooManyRequests = status(429)
    public static let serverError = statuses(500...599)
}

enum HTTPStatus {
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "HTTP \(status)"
        }
    }
}
