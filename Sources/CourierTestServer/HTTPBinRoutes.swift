import Foundation
import Hummingbird

/// httpbin-like routes: echo, status codes, delays, generated bodies, drip, stall, redirects, upload sink.
enum HTTPBinRoutes {
    static let allMethods: [HTTPRequest.Method] = [.get, .post, .put, .patch, .delete, .head, .options]

    static func add(to router: Router<BasicRequestContext>, lifecycle: ServerLifecycle) {
        for method in allMethods {
            router.on("/echo", method: method, use: echo)
            router.on("/echo/**", method: method, use: echo) // any path below, as received
            router.on("/status/{code}", method: method, use: status)
            router.on("/upload", method: method, use: upload)
            router.on("/discard", method: method, use: discard)
            router.on("/redirect/{count}", method: method, use: redirect)
            router.on("/redirect-to", method: method, use: redirectTo)
            router.on("/gzip", method: method) { _, _ in gzipped() }
            router.on("/data-echo", method: method, use: dataEcho)
        }
        router.get("/delay/{ms}") { request, context in try await delay(request, context, lifecycle) }
        for method in [HTTPRequest.Method.get, .head] {
            router.on("/bytes/{count}", method: method) { request, context in
                try generated(count: try count(context), chunked: false)
            }
        }
        router.get("/chunked/{count}") { request, context in
            try generated(count: try count(context), chunked: true)
        }
        router.get("/drip") { request, context in try await drip(request, context, lifecycle) }
        router.get("/stall") { request, context in try await stall(request, context, lifecycle) }
    }

    /// `{count}` of `/bytes` and `/chunked`: a length, so not negative.
    static func count(_ context: BasicRequestContext) throws -> Int {
        try ClientNumber.require(try context.parameters.require("count"), "count", in: ClientNumber.nonNegative)
    }

    /// What `/echo` answers: everything the server received.
    struct Echo: Codable, ResponseEncodable {
        var method: String
        var path: String
        var query: String
        var headers: [[String]]
        var body: String
        var bodyLength: Int
        var bodyHash: String
    }

    @Sendable static func echo(_ request: Request, _ context: BasicRequestContext) async throws -> Echo {
        var request = request
        let buffer = try await request.collectBody(upTo: 64 << 20)
        var hasher = TestPattern.Hasher()
        hasher.update(buffer.readableBytesView)
        let text = buffer.readableBytes <= 1 << 20 ? String(decoding: buffer.readableBytesView, as: UTF8.self) : ""
        return Echo(
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query ?? "",
            headers: request.headers.map { [$0.name.rawName, $0.value] },
            body: text,
            bodyLength: buffer.readableBytes,
            bodyHash: hasher.hex
        )
    }

    /// `/data-echo`: the request's JSON body, answered inside `{"data": {"received": …}}`, the
    /// shape of an API with Discovery's `dataWrapper` feature (Cloud Translation v2).
    @Sendable static func dataEcho(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: 1 << 20)
        let received = buffer.readableBytes == 0 ? "null" : String(decoding: buffer.readableBytesView, as: UTF8.self)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"data":{"received":\#(received)}}"#)))
    }

    @Sendable static func status(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let code = try ClientNumber.require(try context.parameters.require("code"), "code", in: ClientNumber.status)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if let retryAfter = request.uri.queryParameters.get("retryAfter") {
            headers[.retryAfter] = retryAfter
        }
        // 1xx, 204 and 304 never carry a body (RFC 9110 §6.4.1); bytes there would poison the connection.
        if code < 200 || code == 204 || code == 304 {
            headers[.contentType] = nil
            return Response(status: .init(code: code), headers: headers)
        }
        let body = ByteBuffer(string: #"{"status":\#(code)}"#)
        return Response(status: .init(code: code), headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// Consumes a body of any size without holding it, and reports its length and hash.
    @Sendable static func upload(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        var hasher = TestPattern.Hasher()
        for try await buffer in request.body {
            hasher.update(buffer.readableBytesView)
        }
        let body = ByteBuffer(string: #"{"bytes":\#(hasher.count),"hash":"\#(hasher.hex)"}"#)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
    }

    static func delay(_ request: Request, _ context: BasicRequestContext, _ lifecycle: ServerLifecycle) async throws -> Response {
        let milliseconds = try context.parameters.require("ms", as: Int.self)
        try await lifecycle.pause(.milliseconds(milliseconds))
        return Response(status: .ok, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"delayedMs":\#(milliseconds)}"#)))
    }

    /// ``TestServer/gzipBody`` with `Content-Encoding: gzip`, whatever the request offered: a
    /// client that does not decode gets the compressed bytes, as from a server that ignores the offer.
    static func gzipped() -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain", .contentEncoding: "gzip"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: TestServer.gzipBody)))
    }

    /// Consumes a body and only counts it: a sink for throughput benchmarks.
    @Sendable static func discard(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        var count = 0
        for try await buffer in request.body { count += buffer.readableBytes }
        return Response(status: .ok, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"bytes":\#(count)}"#)))
    }

    /// `count` pattern bytes in 64 KiB writes, with Content-Length unless `chunked`.
    static func generated(count: Int, chunked: Bool) throws -> Response {
        let body = ResponseBody(contentLength: chunked ? nil : count) { writer in
            var offset = 0
            while offset < count {
                let size = min(64 << 10, count - offset)
                var buffer = ByteBuffer()
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { bytes in
                    TestPattern.fill(UnsafeMutableRawBufferPointer(rebasing: bytes[0..<size]), offset: offset)
                    return size
                }
                try await writer.write(buffer)
                offset += size
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
    }

    /// `/drip?bytes=N&chunk=K&interval=ms`: K pattern bytes every `interval` until N are sent.
    static func drip(_ request: Request, _ context: BasicRequestContext, _ lifecycle: ServerLifecycle) async throws -> Response {
        let query = request.uri.queryParameters
        let count = try ClientNumber.parse(query.get("bytes"), "bytes", in: ClientNumber.nonNegative) ?? 10
        // Each piece is built whole before it is written.
        let chunk = max(1, try ClientNumber.parse(query.get("chunk"), "chunk", in: ClientNumber.inMemory) ?? 1)
        let interval = try ClientNumber.parse(query.get("interval"), "interval", in: ClientNumber.nonNegative) ?? 100
        let body = ResponseBody(contentLength: count) { writer in
            var offset = 0
            while offset < count {
                let size = min(chunk, count - offset)
                try await writer.write(ByteBuffer(bytes: TestPattern.bytes(count: size, offset: offset)))
                offset += size
                if offset < count { try await lifecycle.pause(.milliseconds(interval)) }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
    }

    /// `/stall?bytes=N&seconds=S`: promises 2N bytes, sends N, then goes quiet for S seconds (10 by default).
    static func stall(_ request: Request, _ context: BasicRequestContext, _ lifecycle: ServerLifecycle) async throws -> Response {
        // Sent in one piece, and twice it promised.
        let count = try ClientNumber.parse(request.uri.queryParameters.get("bytes"), "bytes", in: ClientNumber.inMemory) ?? 10
        let seconds = try ClientNumber.parse(request.uri.queryParameters.get("seconds"), "seconds", in: ClientNumber.nonNegative) ?? 10
        let body = ResponseBody(contentLength: count * 2) { writer in
            try await writer.write(ByteBuffer(bytes: TestPattern.bytes(count: count)))
            try await lifecycle.pause(.seconds(seconds))
            throw CancellationError() // never complete the promised body
        }
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
    }

    /// `/redirect/N`: N hops of 302, then the echo of the last request.
    @Sendable static func redirect(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let count = try context.parameters.require("count", as: Int.self)
        if count <= 0 { return try await echo(request, context).response(from: request, context: context) }
        return Response(status: .found, headers: [.location: "/redirect/\(count - 1)"])
    }

    /// `/redirect-to?url=U&status=S`: one redirect to an absolute or relative URL.
    @Sendable static func redirectTo(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let target = query.get("url") else { return Response(status: .badRequest) }
        let code = try ClientNumber.parse(query.get("status"), "status", in: ClientNumber.status) ?? 302
        return Response(status: .init(code: code), headers: [.location: target])
    }
}
