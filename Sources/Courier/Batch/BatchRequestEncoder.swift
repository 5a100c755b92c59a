import Foundation

/// Encodes queries as Google's batch request: `multipart/mixed`, one `application/http` part per
/// query, each with a `Content-ID` the response echoes as `response-<id>`.
enum BatchRequestEncoder {
    static func encode(_ requests: [(contentID: String, request: HTTPRequest)], boundary: String) -> Data {
        var body = Data()
        func line(_ text: String = "") { body.append(contentsOf: Array((text + "\r\n").utf8)) }
        for (contentID, request) in requests {
            line("--\(boundary)")
            line("Content-Type: application/http")
            line("Content-Transfer-Encoding: binary")
            line("Content-ID: <\(contentID)>")
            line()
            line("\(request.method.rawValue) \(pathAndQuery(request.url)) HTTP/1.1")
            // The outer request carries the credentials; parts carry what varies per query.
            for field in request.headers where !HTTPSyntax.namesEqual(field.name, "Authorization")
                && !HTTPSyntax.namesEqual(field.name, "User-Agent") {
                line("\(field.name): \(field.value)")
            }
            if case .data(let payload) = request.body.storage {
                line("Content-Length: \(payload.count)")
                line()
                body.append(payload)
            } else {
                line() // the end of the headers, even with no body to follow
            }
            // The line break before the next delimiter belongs to the delimiter, not to this part.
            line()
        }
        line("--\(boundary)--")
        return body
    }

    /// `/path?query` of `url`, exactly as encoded.
    static func pathAndQuery(_ url: URL) -> String {
        let text = url.absoluteString
        guard let schemeEnd = text.range(of: "://") else { return text }
        let afterAuthority = text[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
        let rest = String(text[afterAuthority...])
        return rest.hasPrefix("/") ? rest : "/" + rest
    }

    static func makeBoundary() -> String {
        "batch_courier_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
}
