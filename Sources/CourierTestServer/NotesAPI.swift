import CourierSync
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// A small Google-style JSON API under `/notes/v1/`, for testing query code end to end:
///
/// - `GET notes?maxResults=&pageToken=&fields=`: a `notes#noteList` page
/// - `GET notes/{id}`: a `notes#note`, with `ETag`; `If-None-Match` that matches answers 304;
///   `alt=media` answers the note's `body` as text (also under `/download/notes/v1/`)
/// - `POST notes?requestId=`: insert (an `id` in the body is kept, so tests can use hostile IDs);
///   a `requestId` seen before answers the note that request made, as AIP-155's servers do
/// - `PUT notes/{id}`: replace; `PATCH notes/{id}`: merge (a null removes the field, objects merge)
/// - `DELETE notes/{id}`: 204
/// - `GET publicKeys`: a map of strings, as a response that is not an object type
/// - `If-Match` that does not match answers 412 on PUT, PATCH and DELETE
/// - errors in Google's JSON format (v1 `errors[]` and v2 `status`)
///
/// Test controls: `POST seed?count=N` (notes `note-0001` …), `POST reset`, and fault routes
/// `GET flaky/{key}?failures=N&status=S&retryAfter=T`, `GET slow?ms=N`, `GET errors/v2`, `GET errors/text`,
/// `GET malformed`, `GET truncated-json`, `GET ordered`. Responses carry `X-Request-Path`, the
/// raw path the server received.
public final class NotesAPI: Sendable {
    struct State {
        var order: [String] = []
        var notes: [String: Data] = [:]
        var version = 0
        var flaky: [String: Int] = [:]
        /// The note each `requestId` made, and every `requestId` an insert carried, in order.
        var madeByRequestID: [String: Data] = [:]
        var insertRequestIDs: [String?] = []
    }

    /// The `requestId` of every insert the API received, in order (nil for one without).
    public var insertRequestIDs: [String?] { state.withLock { $0.insertRequestIDs } }

    /// How many notes the API holds.
    public var count: Int { state.withLock { $0.notes.count } }

    private let state = LockedValue(State())
    private let lifecycle: ServerLifecycle

    init(lifecycle: ServerLifecycle) {
        self.lifecycle = lifecycle
    }

    /// The notes stored now, by id, as JSON.
    public var noteIDs: [String] { state.withLock { $0.order } }

    /// Adds `count` notes `note-0001`… with titles `Note 1`…
    public func seed(count: Int) {
        for index in 1...max(1, count) {
            _ = store(["id": String(format: "note-%04d", index), "title": "Note \(index)", "body": "Body \(index)"])
        }
    }

    /// Mounts the API under `/notes/v1` on `router` (or a group): one catch-all route per method,
    /// all dispatched to ``handle(_:)``.
    func add(to router: some RouterMethods<BasicRequestContext>) {
        // `/download/notes/v1/…`: the download service, as the document's `useMediaDownloadService` asks.
        let routes = [HTTPRequest.Method.get, .post, .put, .patch, .delete].map { ("/notes/v1/**", $0) } + [("/download/notes/v1/**", .get)]
        for (path, method) in routes {
            router.on(RouterPath(path), method: method) { request, context in
                var request = request
                let body = try await request.collectBody(upTo: 1 << 20)
                let apiRequest = APIRequest(method: request.method.rawValue, rawPath: request.uri.path,
                                            query: request.uri.query ?? "",
                                            // HTTPTypes keeps Host as the request's authority, not a field.
                                            headers: request.headers.map { ($0.name.rawName, $0.value) }
                                                + (request.head.authority.map { [("Host", $0)] } ?? []),
                                            body: Data(body.readableBytesView))
                return try await self.handle(apiRequest).hummingbirdResponse
            }
        }
    }

    /// The API without HTTP framing: used by the routes and by batch parts alike.
    func handle(_ request: APIRequest) async throws -> APIResponse {
        do {
            return try await route(request)
        } catch let error as ClientNumberError {
            return error.apiResponse
        }
    }

    private func route(_ request: APIRequest) async throws -> APIResponse {
        guard let range = request.rawPath.range(of: "/notes/v1/") else {
            return Self.error(404, "notFound", "No such route", request: request)
        }
        let segments = request.rawPath[range.upperBound...].split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.removingPercentEncoding ?? String($0) }
        switch (request.method, segments.count, segments.first ?? "") {
        case ("GET", 1, "notes"): return try list(request)
        case ("GET", 1, "publicKeys"): return Self.raw(#"{"key-1": "PEM one", "key-2": "PEM two"}"#)
        case ("POST", 1, "notes"): return insert(request)
        case ("GET", 2, "notes"): return try get(request, id: segments[1])
        case ("PUT", 2, "notes"): return try update(request, id: segments[1], merge: false)
        case ("PATCH", 2, "notes"): return try update(request, id: segments[1], merge: true)
        case ("DELETE", 2, "notes"): return try delete(request, id: segments[1])
        case ("POST", 1, "seed"):
            seed(count: try ClientNumber.parse(request.parameter("count"), "count", in: 0...100_000) ?? 10)
            return APIResponse(status: 204)
        case ("POST", 1, "reset"):
            state.withLock { $0 = State() }
            return APIResponse(status: 204)
        case ("GET", 2, "flaky"): return try flaky(request, key: segments[1])
        case ("GET", 1, "slow"):
            try await lifecycle.pause(.milliseconds(Int(request.parameter("ms") ?? "") ?? 1000))
            return Self.json(["kind": "notes#note", "id": "slow"], request: request)
        case ("GET", 2, "errors") where segments[1] == "v2":
            return Self.json(["error": ["code": 403, "message": "The caller does not have permission", "status": "PERMISSION_DENIED",
                                        "details": [["@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_DENIED",
                                                     "domain": "notes.example.com"]]]], status: 403, request: request)
        case ("GET", 2, "errors") where segments[1] == "text":
            return APIResponse(status: 502, headers: [("Content-Type", "text/html")],
                               body: Data("<html><body>Bad gateway from the proxy</body></html>".utf8))
        case ("GET", 1, "malformed"): return Self.raw(#"{"id": "x", "title": oops}"#)
        case ("GET", 1, "truncated-json"): return Self.raw(#"{"id":"abc","title":"Trun"#)
        case ("GET", 1, "ordered"):
            // Member order that is not alphabetical, an unknown field, and integers beyond 2^53.
            return Self.raw(#"{"zeta":1,"kind":"notes#note","id":"ordered","alpha":{"y":2,"x":1},"big":12345678901234567890123,"exact":9007199254740993,"title":"Ordered","unknownField":{"nested":[1,2,{"deep":true}]}}"#)
        default:
            return Self.error(404, "notFound", "No route for \(request.method) \(request.rawPath)", request: request)
        }
    }

    // MARK: Handlers

    private func list(_ request: APIRequest) throws -> APIResponse {
        let maxResults = max(1, min(Int(request.parameter("maxResults") ?? "") ?? 100, 1000))
        let start = try ClientNumber.parse(request.parameter("pageToken")?.dropFirst("page-".count), "pageToken",
                                           in: 0...1_000_000_000) ?? 0
        let (items, total) = state.withLock { state -> ([Data], Int) in
            let ids = state.order.dropFirst(start).prefix(maxResults)
            return (ids.compactMap { state.notes[$0] }, state.order.count)
        }
        var page: [String: Any] = ["kind": "notes#noteList",
                                   "items": try items.map { try JSONSerialization.jsonObject(with: $0) }]
        if start + maxResults < total { page["nextPageToken"] = "page-\(start + maxResults)" }
        return Self.json(FieldsFilter.apply(request.parameter("fields"), to: page), request: request)
    }

    private func get(_ request: APIRequest, id: String) throws -> APIResponse {
        guard let note = try stored(id) else { return Self.error(404, "notFound", "Note not found: \(id)", request: request) }
        let etag = note["etag"] as? String ?? ""
        if request.parameter("alt") == "media" {
            // The note's content as its media, like Drive's files.get?alt=media.
            return APIResponse(status: 200, headers: [("Content-Type", "text/plain; charset=utf-8"), ("ETag", etag)],
                               body: Data((note["body"] as? String ?? "").utf8))
        }
        if request.header("If-None-Match") == etag {
            return APIResponse(status: 304, headers: [("ETag", etag)])
        }
        var response = Self.json(FieldsFilter.apply(request.parameter("fields"), to: note), request: request)
        response.headers.append(("ETag", etag))
        return response
    }

    private func insert(_ request: APIRequest) -> APIResponse {
        guard let note = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any] else {
            return Self.error(400, "parseError", "The request body is not a JSON object", request: request)
        }
        let requestID = request.parameter("requestId").flatMap { $0.isEmpty ? nil : $0 }
        let made = state.withLock { state in
            state.insertRequestIDs.append(requestID)
            return requestID.flatMap { state.madeByRequestID[$0] }
        }
        if let made, let note = try? JSONSerialization.jsonObject(with: made) { return Self.json(note, request: request) }
        if let id = note["id"] as? String, state.withLock({ $0.notes[id] != nil }) {
            return Self.error(409, "duplicate", "Note already exists: \(id)", request: request)
        }
        let stored = store(note)
        if let requestID, let data = try? JSONSerialization.data(withJSONObject: stored) {
            state.withLock { $0.madeByRequestID[requestID] = data }
        }
        var response = Self.json(stored, request: request)
        // The new note's absolute URL, as REST APIs answer a create: what a load flow follows.
        if let host = request.header("Host"), let id = stored["id"] as? String {
            response.headers.append(("Location", "http://\(host)/notes/v1/notes/\(id)"))
        }
        return response
    }

    private func update(_ request: APIRequest, id: String, merge: Bool) throws -> APIResponse {
        guard let changes = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any] else {
            return Self.error(400, "parseError", "The request body is not a JSON object", request: request)
        }
        guard var note = try stored(id) else { return Self.error(404, "notFound", "Note not found: \(id)", request: request) }
        if let ifMatch = request.header("If-Match"), ifMatch != note["etag"] as? String {
            return Self.error(412, "conditionNotMet", "Precondition Failed", request: request)
        }
        note = merge ? Self.mergePatch(note, changes) : changes
        note["id"] = id
        return Self.json(store(note), request: request)
    }

    private func delete(_ request: APIRequest, id: String) throws -> APIResponse {
        guard let note = try stored(id) else { return Self.error(404, "notFound", "Note not found: \(id)", request: request) }
        if let ifMatch = request.header("If-Match"), ifMatch != note["etag"] as? String {
            return Self.error(412, "conditionNotMet", "Precondition Failed", request: request)
        }
        state.withLock { state in
            state.notes[id] = nil
            state.order.removeAll { $0 == id }
        }
        return APIResponse(status: 204, headers: [("X-Request-Path", request.rawPath)])
    }

    /// Fails `failures` times per key with `status` (and `Retry-After` if given), then answers a note.
    private func flaky(_ request: APIRequest, key: String) throws -> APIResponse {
        let failures = Int(request.parameter("failures") ?? "") ?? 2
        let status = try ClientNumber.parse(request.parameter("status"), "status", in: ClientNumber.status) ?? 503
        let seen = state.withLock { state -> Int in
            state.flaky[key, default: 0] += 1
            return state.flaky[key]!
        }
        if seen <= failures {
            var response = Self.error(status, "backendError", "Flaky failure \(seen) of \(failures)", request: request)
            if let retryAfter = request.parameter("retryAfter") { response.headers.append(("Retry-After", retryAfter)) }
            return response
        }
        return Self.json(["kind": "notes#note", "id": key, "title": "Recovered after \(failures) failures",
                          "attempts": seen], request: request)
    }

    private func stored(_ id: String) throws -> [String: Any]? {
        guard let data = state.withLock({ $0.notes[id] }) else { return nil }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    // MARK: Storage and helpers

    private func store(_ note: [String: Any]) -> [String: Any] {
        var note = note
        let version = state.withLock { state -> Int in
            state.version += 1
            return state.version
        }
        let id = note["id"] as? String ?? "n\(version)"
        note["id"] = id
        note["kind"] = "notes#note"
        note["etag"] = "\"v\(version)\""
        note["updated"] = ISO8601DateFormatter().string(from: Date())
        let data = try? JSONSerialization.data(withJSONObject: note, options: [.sortedKeys])
        state.withLock { state in
            if state.notes[id] == nil { state.order.append(id) }
            state.notes[id] = data
        }
        return note
    }

    /// RFC 7386: null removes a member, objects merge recursively, anything else replaces.
    static func mergePatch(_ target: [String: Any], _ patch: [String: Any]) -> [String: Any] {
        var result = target
        for (key, value) in patch {
            if value is NSNull {
                result[key] = nil
            } else if let nested = value as? [String: Any] {
                result[key] = mergePatch(result[key] as? [String: Any] ?? [:], nested)
            } else {
                result[key] = value
            }
        }
        return result
    }

    static func json(_ object: Any, status: Int = 200, request: APIRequest? = nil) -> APIResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        var headers = [("Content-Type", "application/json; charset=UTF-8")]
        if let request { headers.append(("X-Request-Path", request.rawPath)) }
        return APIResponse(status: status, headers: headers, body: data)
    }

    /// A JSON response for a Hummingbird route.
    static func json(apiRequest request: Request, _ object: Any, status: Int = 200) -> Response {
        var response = json(object, status: status).hummingbirdResponse
        response.headers[HTTPField.Name("X-Request-Path")!] = request.uri.path
        return response
    }

    static func raw(_ text: String) -> APIResponse {
        APIResponse(status: 200, headers: [("Content-Type", "application/json")], body: Data(text.utf8))
    }

    /// Google's error format, v1 and v2 fields together as the real APIs send them.
    static func error(_ code: Int, _ reason: String, _ message: String, request: APIRequest? = nil) -> APIResponse {
        let statusName: String = switch code {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 409: "ALREADY_EXISTS"
        case 412: "FAILED_PRECONDITION"
        case 429: "RESOURCE_EXHAUSTED"
        case 503: "UNAVAILABLE"
        default: "UNKNOWN"
        }
        return json(["error": ["code": code, "message": message, "status": statusName,
                               "errors": [["domain": "global", "reason": reason, "message": message]]]],
                    status: code, request: request)
    }
}

/// Google's partial-response selector: `a,b/c,items(id,title)`.
enum FieldsFilter {
    indirect enum Selection {
        case all
        case fields([String: Selection])
    }

    static func apply(_ fields: String?, to object: [String: Any]) -> [String: Any] {
        guard let fields, !fields.isEmpty, case .fields(let selection) = parse(Substring(fields)) else { return object }
        return filter(object, selection)
    }

    static func parse(_ text: Substring) -> Selection {
        var result: [String: Selection] = [:]
        var depth = 0
        var start = text.startIndex
        func commit(_ part: Substring) {
            let part = part.trimmingCharacters(in: .whitespaces)
            guard !part.isEmpty else { return }
            var name = Substring(part)
            var sub = Selection.all
            if let open = part.firstIndex(of: "("), part.hasSuffix(")") {
                name = Substring(part[..<open])
                sub = parse(Substring(part[part.index(after: open)..<part.index(before: part.endIndex)]))
            }
            let path = name.split(separator: "/").map { String($0) }
            var node = sub
            for key in path.dropFirst().reversed() { node = .fields([key: node]) }
            if let head = path.first { result[head] = merge(result[head], node) }
        }
        for index in text.indices {
            switch text[index] {
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 0:
                commit(text[start..<index])
                start = text.index(after: index)
            default: break
            }
        }
        commit(text[start...])
        return .fields(result)
    }

    private static func merge(_ a: Selection?, _ b: Selection) -> Selection {
        guard let a else { return b }
        switch (a, b) {
        case (.all, _), (_, .all): return .all
        case let (.fields(x), .fields(y)): return .fields(x.merging(y) { merge($0, $1) })
        }
    }

    private static func filter(_ object: [String: Any], _ selection: [String: Selection]) -> [String: Any] {
        var result: [String: Any] = [:]
        for (key, sub) in selection {
            guard let value = object[key] else { continue }
            result[key] = filter(value, sub)
        }
        return result
    }

    private static func filter(_ value: Any, _ selection: Selection) -> Any {
        guard case .fields(let fields) = selection else { return value }
        if let object = value as? [String: Any] { return filter(object, fields) }
        if let array = value as? [Any] { return array.map { filter($0, selection) } }
        return value
    }
}
