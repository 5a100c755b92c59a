import Foundation
import HTTPTypes
import Hummingbird

/// Google's batch protocol over the Notes API: `POST /batch/notes/v1` takes `multipart/mixed`
/// with one `application/http` request per part and answers each part with
/// `Content-ID: <response-…>`, in order. Parts for `/protected/notes/v1/…` are authorized by the
/// batch request's own bearer token, as Google's batch endpoint does.
///
/// Each part's Cloud Storage invocation headers go to ``TestServerCounters/batchParts``.
///
/// `POST /batch/broken/v1?mode=…` answers the same parts in a deliberately broken response:
/// `truncate` (cut inside the last part), `nocontentid` (the first part lacks its Content-ID),
/// `nothttp` (the first part is not an HTTP response), `lfonly` (LF line ends, quoted boundary,
/// padding after delimiters: broken only in style, still valid).
enum BatchEndpoint {
    static func add(to router: Router<BasicRequestContext>, notes: NotesAPI, tokens: TokenServer, counters: TestServerCounters) {
        router.post("/batch/notes/v1") { request, _ in
            try await respond(to: request, notes: notes, tokens: tokens, counters: counters, mode: nil)
        }
        router.post("/batch/broken/v1") { request, _ in
            try await respond(to: request, notes: notes, tokens: tokens, counters: counters,
                              mode: request.uri.queryParameters.get("mode").map { String($0) })
        }
    }

    private static func respond(to request: Request, notes: NotesAPI, tokens: TokenServer, counters: TestServerCounters,
                                mode: String?) async throws -> Response {
        var request = request
        let body = Data(try await request.collectBody(upTo: 32 << 20).readableBytesView)
        guard let boundary = request.headers[.contentType].flatMap(boundaryParameter) else {
            return NotesAPI.error(400, "badRequest", "Batch requests must be multipart/mixed with a boundary").hummingbirdResponse
        }
        let authorization = request.headers[.authorization]
        var answers: [(contentID: String, response: APIResponse)] = []
        for part in split(body, boundary: boundary) {
            let contentID = part.headers.first { $0.0.lowercased() == "content-id" }?.1
                .trimmingCharacters(in: CharacterSet(charactersIn: "<> ")) ?? ""
            answers.append((contentID, try await answer(part.content, authorization: authorization, notes: notes, tokens: tokens,
                                                        counters: counters)))
        }
        let outBoundary = "batch_server_\(UUID().uuidString.prefix(8))"
        let lineEnd = mode == "lfonly" ? "\n" : "\r\n"
        var text = ""
        for (index, (contentID, response)) in answers.enumerated() {
            text += "--\(outBoundary)" + (mode == "lfonly" ? " \t" : "") + lineEnd
            text += "Content-Type: application/http" + lineEnd
            if !(mode == "nocontentid" && index == 0) { text += "Content-ID: <response-\(contentID)>" + lineEnd }
            text += lineEnd
            if mode == "nothttp" && index == 0 {
                text += "this is not an HTTP response" + lineEnd
            } else {
                text += "HTTP/1.1 \(response.status) \(HTTPResponse.Status(code: response.status).reasonPhrase)" + lineEnd
                for (name, value) in response.headers { text += "\(name): \(value)" + lineEnd }
                text += "Content-Length: \(response.body.count)" + lineEnd + lineEnd
                text += String(decoding: response.body, as: UTF8.self) + lineEnd
            }
        }
        text += "--\(outBoundary)--" + lineEnd
        if mode == "truncate" { text = String(text.prefix(max(0, text.count - 40))) }
        let contentType = mode == "lfonly" ? "multipart/mixed; boundary=\"\(outBoundary)\"" : "multipart/mixed; boundary=\(outBoundary)"
        return Response(status: .ok, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// One part's HTTP request, run against the Notes API.
    private static func answer(_ content: Data, authorization: String?, notes: NotesAPI, tokens: TokenServer,
                               counters: TestServerCounters) async throws -> APIResponse {
        let text = String(decoding: content, as: UTF8.self)
        // Strict, as Google's endpoint is: a part request without the blank line that ends its headers is malformed.
        guard let split = text.range(of: "\r\n\r\n") else {
            return NotesAPI.error(400, "badRequest", "A batch part's request has no blank line after its headers")
        }
        let (head, body) = (String(text[..<split.lowerBound]), String(text[split.upperBound...]))
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        guard requestLine.count == 3 else { return NotesAPI.error(400, "badRequest", "Malformed part request line") }
        let target = String(requestLine[1])
        let (path, query) = target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) }
            ?? (target, "")
        var headers: [(String, String)] = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name }?.1 }
        counters.batchPartReceived(.init(token: header("x-goog-gcs-idempotency-token"), client: header("x-goog-api-client")))
        let length: Int
        do {
            length = try ClientNumber.parse(header("content-length"), "a part's Content-Length",
                                            in: ClientNumber.nonNegative) ?? body.utf8.count
        } catch {
            return error.apiResponse
        }
        if path.hasPrefix("/protected/") {
            guard let authorization, authorization.hasPrefix("Bearer "),
                  tokens.isValid(String(authorization.dropFirst("Bearer ".count)))
            else { return NotesAPI.error(401, "authError", "Request had invalid authentication credentials.") }
        }
        if let authorization { headers.append(("Authorization", authorization)) }
        return try await notes.handle(APIRequest(method: String(requestLine[0]), rawPath: path, query: query, headers: headers,
                                                 body: Data(body.utf8.prefix(length))))
    }

    private static func boundaryParameter(_ contentType: String) -> String? {
        contentType.split(separator: ";").dropFirst().compactMap { parameter -> String? in
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == "boundary" else { return nil }
            return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        }.first
    }

    /// The parts of a well-formed CRLF multipart body (the client under test produces those).
    private static func split(_ body: Data, boundary: String) -> [(headers: [(String, String)], content: Data)] {
        let text = String(decoding: body, as: UTF8.self)
        var parts: [(headers: [(String, String)], content: Data)] = []
        for chunk in text.components(separatedBy: "--\(boundary)").dropFirst() {
            if chunk.hasPrefix("--") { break }
            // "\r\n" is a single Character in Swift: trim it as bytes.
            let trimmed = chunk.utf8.starts(with: "\r\n".utf8) ? String(decoding: chunk.utf8.dropFirst(2), as: UTF8.self) : chunk
            guard let split = trimmed.range(of: "\r\n\r\n") else { continue }
            let headers = trimmed[..<split.lowerBound].components(separatedBy: "\r\n").compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            var content = Data(trimmed[split.upperBound...].utf8)
            if content.suffix(2) == Data("\r\n".utf8) { content.removeLast(2) }
            parts.append((headers, content))
        }
        return parts
    }
}
