import Hummingbird
import HTTPTypes
import HummingbirdCore

/// Counts requests, those sent as to a proxy, and the peak of concurrent ones.
struct CountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let counters: TestServerCounters
    static var proxyConnection: HTTPField.Name { HTTPField.Name("Proxy-Connection")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        counters.requestStarted(proxied: request.headers[Self.proxyConnection] != nil)
        do {
            var response = try await next(request, context)
            // A streamed body is written after the handler returns: count the request until then.
            let counters = counters
            let body = response.body
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer { counters.requestEnded() }
                try await body.write(writer)
            }
            return response
        } catch {
            counters.requestEnded()
            throw error
        }
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
