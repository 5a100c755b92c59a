import CourierSync
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// HTTP-level faults on any route of the main listener, chosen per request by the header
/// `X-Courier-Fault`, as storage-testbench's retry-conformance instructions are:
///
/// - `503x3`: the first 3 requests carrying this exact header value get a 503, then the routes
///   answer (add `;run=<id>` to give each test run its own count, as testbench instructions are
///   consumed);
/// - `429x2`: the same with 429 and `Retry-After: 1`;
/// - `401x1`: the same with 401, as a server does for an expired or revoked token;
/// - `403x1`: the same with 403 and Google's error reason `rateLimitExceeded`;
/// - `applied-503x1`: the route runs first (a write is applied), then the first request's answer
///   is replaced by a 503: the answer lost on its way back, as behind a gateway that timed out;
/// - `quota-50`: at most 50 requests per second per header value, the rest 429
///   `RESOURCE_EXHAUSTED` with no `Retry-After` (``QuotaLedger`` keeps the books);
/// - `slow-200`: the route answers after 200 ms;
/// - `redirect-loop`: every request is answered `307` back to its own URL;
/// - `slow-body`: the route's response body goes out in 16 KiB pieces, 20 ms apart;
/// - `stall-body`: half of the route's response body goes out, then nothing until the server
///   stops (the `Content-Length` promises the rest).
///
/// `drop-kept-alive` (a kept-alive connection closed as its next request arrives) is a
/// connection's, so ``KeptAliveDropHandler`` keeps it.
///
/// Wire-level faults (resets, truncation, invalid chunking, stalls, huge headers) are the raw
/// fault server's (``TestServer/faultURL``), with the same header.
struct FaultMiddleware<Context: RequestContext>: RouterMiddleware {
    let seen = Seen()
    let lifecycle: ServerLifecycle
    let quotas: QuotaLedger

    final class Seen: Sendable {
        let counts = LockedValue<[String: Int]>([:])
        /// How many times this request was seen before, counting this one.
        func next(_ key: String) -> Int { counts.withLock { $0[key, default: 0] += 1; return $0[key]! } }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[HTTPField.Name("X-Courier-Fault")!] else { return try await next(request, context) }
        let fault = header.split(separator: ";").first.map(String.init) ?? header
        if fault == "redirect-loop" {
            return Response(status: .temporaryRedirect, headers: [.location: request.uri.description, .contentLength: "0"])
        }
        if fault == "slow-body" || fault == "stall-body" {
            let response = try await next(request, context)
            return try await Self.rewrite(response, stalling: fault == "stall-body", lifecycle: lifecycle)
        }
        if fault.hasPrefix("quota-"), let limit = Int(fault.dropFirst(6)) {
            guard quotas.admit(header, limit: limit) else {
                let body = #"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","errors":[{"reason":"rateLimitExceeded"}]}}"#
                return Response(status: .tooManyRequests, headers: [.contentType: "application/json"],
                                body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
            }
            return try await next(request, context)
        }
        if fault.hasPrefix("slow-"), let milliseconds = Int(fault.dropFirst(5)) {
            try await Task.sleep(for: .milliseconds(milliseconds))
            return try await next(request, context)
        }
        let applied = fault.hasPrefix("applied-")
        let parts = fault.dropFirst(applied ? 8 : 0).split(separator: "x")
        guard parts.count == 2, Int(parts[0]) != nil, let times = Int(parts[1]) else { return try await next(request, context) }
        let status = try ClientNumber.require(parts[0], "X-Courier-Fault's status", in: ClientNumber.status)
        if applied {
            let response = try await next(request, context)
            guard seen.next(header) <= times else { return response }
        } else {
            guard seen.next(header) <= times else { return try await next(request, context) }
        }
        var headers: HTTPFields = [.contentType: "application/json"]
        if status == 429 { headers[.retryAfter] = "1" }
        if status == 401 { headers[.wwwAuthenticate] = #"Bearer error="invalid_token""# }
        let reason = status == 403 ? "rateLimitExceeded" : "backendError"
        let body = #"{"error":{"code":\#(status),"message":"injected fault \#(fault)","errors":[{"reason":"\#(reason)"}]}}"#
        return Response(status: .init(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    /// `response` with its body sent slowly, or half sent and then stalled.
    static func rewrite(_ response: Response, stalling: Bool, lifecycle: ServerLifecycle) async throws -> Response {
        let collector = Collector()
        try await response.body.write(collector)
        let body = collector.buffer.withLock { $0 }
        var rewritten = response
        rewritten.body = ResponseBody(contentLength: body.readableBytes) { writer in
            if stalling {
                try await writer.write(body.getSlice(at: body.readerIndex, length: body.readableBytes / 2)!)
                try await lifecycle.pause(.seconds(300))
                return
            }
            var rest = body
            while let piece = rest.readSlice(length: min(16 << 10, rest.readableBytes)), piece.readableBytes > 0 {
                try await writer.write(piece)
                try await lifecycle.pause(.milliseconds(20))
            }
            try await writer.finish(nil)
        }
        return rewritten
    }

    /// Keeps what a route wrote.
    struct Collector: ResponseBodyWriter {
        let buffer = LockedValue(ByteBuffer())
        mutating func write(_ piece: ByteBuffer) async throws {
            _ = buffer.withLock { $0.writeImmutableBuffer(piece) }
        }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
