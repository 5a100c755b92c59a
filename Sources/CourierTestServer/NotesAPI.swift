import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// A small Google-style JSON API under `/notes/v1/`, for testing query code end to end:
///
/// - `GET notes?maxResults=&pageToken=&fields=`: a `notes#noteList` page
/// - `GET notes/{id}`: a `notes#note`, with `ETag`; `If-None-Match` that matches answers 304;
///   `alt=media` answers the note's `body` as text
/// - `POST notes`: insert (an `id` in the body is kept, so tests can use hostile IDs)
/// - `PUT notes/{id}`: replace; `PATCH notes/{id}`: merge (a null removes the field, objects merge)
/// - `DELETE notes/{id}`: 204
/// - `If-Match` that does not match answers 412 on PUT, PATCH and DELETE
/// - errors in Google's JSON format (v1 `errors[]` and v2 `status`)
///
/// Test controls: `POST seed?count=N` (notes `note-0001` …), `POST reset`, and fault routes
/// `GET flaky/{key}?failures=N&status=S&retryAfter=T`, `GET errors/v2`, `GET errors/text`,
/// `GET malformed`, `GET truncated-json`, `GET ordered`. Responses carry `X-Request-Path`, the
/// raw path the server received.
public final class NotesAPI: Sendable {
    struct State {
        var order: [String] = []
        var notes: [String: Data] = [:]
        var version = 0
        var flaky: [String: Int] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// The notes stored now, by id, as JSON.
    public var noteIDs: [String] { state.withLock { $0.order } }

    /// Adds `count` notes `note-0001`… with titles `Note 1`…
    public func seed(count: Int) {
        for index in 1...max(1, count) {
            _ = store(["id": String(format: "note-%04d", index), "title": "Note \(index)", "body": "Body \(index)"])
        }
    }

    func add(to router: some RouterMethods<BasicRequestContext>) {
        let group = router.group("/notes/v1")
        group.get("notes") { request, _ in try self.list(request) }
        group.post("notes") { request, context in try await self.insert(request, context) }
        group.get("notes/{id}") { request, context in try self.get(request, context) }
        group.put("notes/{id}") { request, context in try await self.update(request, context, merge: false) }
        group.patch("notes/{id}") { request, context in try await self.update(request, context, merge: true) }
        group.delete("notes/{id}") { request, context in try self.delete(request, context) }
        group.post("seed") { request, _ in
            self.seed(count: request.uri.queryParameters.get("count", as: Int.self) ?? 10)
            return Response(status: .noContent)
        }
        group.post("reset") { _, _ in
            self.state.withLock { $0 = State() }
            return Response(status: .noContent)
        }
        group.get("flaky/{key}") { request, context in try self.flaky(request, context) }
        group.get("errors/v2") { _, _ in
            Self.json(["error": ["code": 403, "message": "The caller does not have permission", "status": "PERMISSION_DENIED",
                                 "details": [["@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_DENIED",
                                              "domain": "notes.example.com"]]]], status: .forbidden)
        }
        group.get("errors/text") { _, _ in
            Response(status: .badGateway, headers: [.contentType: "text/html"],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: "<html><body>Bad gateway from the proxy</body></html>")))
        }
        group.get("malformed") { _, _ in Self.raw(#"{"id": "x", "title": oops}"#) }
        group.get("truncated-json") { _, _ in Self.raw(#"{"id":"abc","title":"Trun"#) }
        group.get("ordered") { _, _ in
            // Member order that is not alphabetical, an unknown field, and integers beyond 2^53.
            Self.raw(#"{"zeta":1,"kind":"notes#note","id":"ordered","alpha":{"y":2,"x":1},"big":12345678901234567890123,"exact":9007199254740993,"title":"Ordered","unknownField":{"nested":[1,2,{"deep":true}]}}"#)
        }
    }

    // MARK: Handlers

    private func list(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters
        let maxResults = max(1, min(query.get("maxResults", as: Int.self) ?? 100, 1000))
        let start = query.get("pageToken").flatMap { Int(String($0).dropFirst("page-".count)) } ?? 0
        let (items, total) = state.withLock { state -> ([Data], Int) in
            let ids = state.order.dropFirst(start).prefix(maxResults)
            return (ids.compactMap { state.notes[$0] }, state.order.count)
        }
        var page: [String: Any] = ["kind": "notes#noteList",
                                   "items": try items.map { try JSONSerialization.jsonObject(with: $0) }]
        if start + maxResults < total { page["nextPageToken"] = "page-\(start + maxResults)" }
        return Self.json(FieldsFilter.apply(query.get("fields").map { String($0) }, to: page), request: request)
    }

    private func get(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let id = try Self.id(context)
        guard let data = state.withLock({ $0.notes[id] }), let note = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return Self.error(404, "notFound", "Note not found: \(id)", request: request)
        }
        let etag = note["etag"] as? String ?? ""
        if request.uri.queryParameters.get("alt") == "media" {
            // The note's content as its media, like Drive's files.get?alt=media.
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8", .eTag: etag],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: note["body"] as? String ?? "")))
        }
        if request.headers[.ifNoneMatch] == etag {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        var response = Self.json(FieldsFilter.apply(request.uri.queryParameters.get("fields").map { String($0) }, to: note),
                                 request: request)
        response.headers[.eTag] = etag
        return response
    }

    private func insert(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 1 << 20)
        guard let note = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else {
            return Self.error(400, "parseError", "The request body is not a JSON object", request: request)
        }
        if let id = note["id"] as? String, state.withLock({ $0.notes[id] != nil }) {
            return Self.error(409, "duplicate", "Note already exists: \(id)", request: request)
        }
        return Self.json(store(note), request: request)
    }

    private func update(_ request: Request, _ context: BasicRequestContext, merge: Bool) async throws -> Response {
        var request = request
        let id = try Self.id(context)
        let body = try await request.collectBody(upTo: 1 << 20)
        guard let changes = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any] else {
            return Self.error(400, "parseError", "The request body is not a JSON object", request: request)
        }
        guard let data = state.withLock({ $0.notes[id] }), var note = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return Self.error(404, "notFound", "Note not found: \(id)", request: request)
        }
        if let ifMatch = request.headers[.ifMatch], ifMatch != note["etag"] as? String {
            return Self.error(412, "conditionNotMet", "Precondition Failed", request: request)
        }
        note = merge ? Self.mergePatch(note, changes) : changes
        note["id"] = id
        return Self.json(store(note), request: request)
    }

    private func delete(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let id = try Self.id(context)
        guard let data = state.withLock({ $0.notes[id] }), let note = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return Self.error(404, "notFound", "Note not found: \(id)", request: request)
        }
        if let ifMatch = request.headers[.ifMatch], ifMatch != note["etag"] as? String {
            return Self.error(412, "conditionNotMet", "Precondition Failed", request: request)
        }
        state.withLock { state in
            state.notes[id] = nil
            state.order.removeAll { $0 == id }
        }
        return Response(status: .noContent, headers: [HTTPField.Name("X-Request-Path")!: request.uri.path])
    }

    /// Fails `failures` times per key with `status` (and `Retry-After` if given), then answers a note.
    private func flaky(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let key = try Self.id(context, name: "key")
        let query = request.uri.queryParameters
        let failures = query.get("failures", as: Int.self) ?? 2
        let status = query.get("status", as: Int.self) ?? 503
        let seen = state.withLock { state -> Int in
            state.flaky[key, default: 0] += 1
            return state.flaky[key]!
        }
        if seen <= failures {
            var response = Self.error(status, "backendError", "Flaky failure \(seen) of \(failures)", request: request)
            if let retryAfter = query.get("retryAfter") { response.headers[.retryAfter] = String(retryAfter) }
            return response
        }
        return Self.json(["kind": "notes#note", "id": key, "title": "Recovered after \(failures) failures",
                          "attempts": seen], request: request)
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

    static func id(_ context: BasicRequestContext, name: String = "id") throws -> String {
        let raw = try context.parameters.require(name)
        return raw.removingPercentEncoding ?? raw
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok, request: Request? = nil) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        var headers: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        if let request { headers[HTTPField.Name("X-Request-Path")!] = request.uri.path }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func raw(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// Google's error format, v1 and v2 fields together as the real APIs send them.
    static func error(_ code: Int, _ reason: String, _ message: String, request: Request? = nil) -> Response {
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
                    status: .init(code: code), request: request)
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
