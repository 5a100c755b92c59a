import Hummingbird
import HTTPTypes
import HummingbirdCore
import NIOCore
import Synchronization

/// Counts requests, those sent as to a proxy, and the peak of concurrent ones.
struct CountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let counters: TestServerCounters
    static var proxyConnection: HTTPField.Name { HTTPField.Name("Proxy-Connection")! }
    static var idempotencyToken: HTTPField.Name { HTTPField.Name("x-goog-gcs-idempotency-token")! }
    static var apiClient: HTTPField.Name { HTTPField.Name("x-goog-api-client")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        counters.requestStarted(proxied: request.headers[Self.proxyConnection] != nil,
                                invocation: .init(token: request.headers[Self.idempotencyToken], client: request.headers[Self.apiClient]))
        do {
            var response = try await next(request, context)
            // A streamed body is written after the handler returns: count the request until then.
            let counters = counters
            let body = response.body
            let length = body.contentLength
            response.body = ResponseBody(contentLength: length) { writer in
                let end = RequestEnd(counters: counters)
                defer { end.once() } // a failed write ends the request too
                try await body.write(EndCountingWriter(base: writer, end: end, contentLength: length))
            }
            return response
        } catch {
            counters.requestEnded()
            throw error
        }
    }
}

/// Ends the request's count just *before* the client can see the response complete: before the
/// write that brings the body to its declared length, or before the final chunk. Counting it
/// after the last write returned let a client that had read the whole response still see the
/// request in flight.
private struct EndCountingWriter: ResponseBodyWriter {
    var base: any ResponseBodyWriter
    let end: RequestEnd
    let contentLength: Int?
    var written = 0

    mutating func write(_ buffer: ByteBuffer) async throws {
        written += buffer.readableBytes
        if let contentLength, written >= contentLength { end.once() }
        try await base.write(buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        end.once()
        try await base.finish(trailingHeaders)
    }
}

/// A request's end, counted once: by the writer, or after a write that failed.
private final class RequestEnd: Sendable {
    let counters: TestServerCounters
    private let done = Atomic(false)

    init(counters: TestServerCounters) { self.counters = counters }

    func once() {
        if !done.exchange(true, ordering: .relaxed) { counters.requestEnded() }
    }
}

/// Counts connections as Hummingbird opens and closes them.
struct ConnectionCounter: AvailableConnectionsDelegate {
    let counters: TestServerCounters
    func connectionOpened() { counters.connectionOpened() }
    func connectionClosed() { counters.connectionClosed() }
    func isAcceptingNewConnections() -> Bool { true }
}

/// Waits before answering, as a network round trip would.
struct LatencyMiddleware<Context: RequestContext>: RouterMiddleware {
    let latency: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await Task.sleep(for: latency)
        return try await next(request, context)
    }
}
