import Courier
import Foundation
import HTTPTypes
import OpenAPIRuntime

extension Courier.HTTPRequest {
    /// The OpenAPI request at `baseURL`: the server URL's path, then the operation's path and query.
    /// The operation's path comes percent-encoded from the generated client, so the two join as
    /// text and the URL is parsed once.
    init(_ request: HTTPTypes.HTTPRequest, baseURL: URL) throws {
        let operation = request.path ?? ""
        var base = baseURL.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        guard baseURL.query == nil, baseURL.fragment == nil, operation.hasPrefix("/"), let url = URL(string: base + operation) else {
            throw OpenAPITransportError(code: .invalidURL, message: "cannot join \(Redaction.url(baseURL.absoluteString)) and the operation's path \(operation)")
        }
        self.init(method: HTTPMethod(rawValue: request.method.rawValue), url: url)
        for field in request.headerFields { headers.add(name: field.name.canonicalName, value: field.value) }
    }
}

extension CourierTransport {
    /// The request body: in memory when its known length is at most `limit` (so it can be sent
    /// again), else streamed as the connection drains it. A streamed body's own error (a length
    /// that does not match, or whatever the body threw) is what `send` throws.
    static func body(_ body: HTTPBody?, bufferingUpTo limit: Int) async throws -> Courier.HTTPRequest.Body {
        guard let body else { return .empty }
        switch body.length {
        case .known(let length):
            // Checked in memory and streamed alike: curl sends exactly the declared
            // Content-Length, so unchecked a longer body would be cut silently and a shorter one
            // would hang.
            let checked = LengthCheckedBody(body: body, length: length)
            guard length <= limit else { return .stream(checked, length: length) }
            var bytes = Data(capacity: Int(length))
            for try await chunk in checked { bytes.append(chunk) }
            return .data(bytes)
        case .unknown:
            return .stream(body.map { Data($0) }, length: nil)
        }
    }
}

private func lengthMismatch(declared: Int64, atLeast count: Int64, ended: Bool = false) -> OpenAPITransportError {
    OpenAPITransportError(code: .bodyLengthMismatch,
                          message: "the request body declared \(declared) bytes and yielded \(ended ? "" : "at least ")\(count)")
}

/// An `HTTPBody`'s chunks as `Data`, failing with `.bodyLengthMismatch` as soon as they pass
/// the declared length, or at their end when they fall short of it.
struct LengthCheckedBody: AsyncSequence, Sendable {
    typealias Element = Data
    let body: HTTPBody
    let length: Int64

    struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: HTTPBody.AsyncIterator
        let length: Int64
        var count: Int64 = 0

        mutating func next() async throws -> Data? {
            guard let chunk = try await chunks.next() else {
                guard count == length else { throw lengthMismatch(declared: length, atLeast: count, ended: true) }
                return nil
            }
            count += Int64(chunk.count)
            guard count <= length else { throw lengthMismatch(declared: length, atLeast: count) }
            return Data(chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: body.makeAsyncIterator(), length: length) }
}

extension HTTPTypes.HTTPResponse {
    init(_ head: HTTPResponseHead) {
        var fields = HTTPFields()
        for field in head.headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            fields.append(HTTPField(name: name, value: field.value))
        }
        self.init(status: .init(code: head.status), headerFields: fields)
    }
}

extension HTTPBody {
    /// The streamed response's body, handed over as it arrives; none for HEAD.
    convenience init?(_ response: HTTPStreamingResponse, method: HTTPTypes.HTTPRequest.Method) {
        guard method != .head else { return nil }
        let length = response.headers["Content-Length"].flatMap(Int64.init).map(HTTPBody.Length.known) ?? .unknown
        self.init(response.body.map { ArraySlice($0) }, length: length, iterationBehavior: .single)
    }
}
