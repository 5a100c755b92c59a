import Hummingbird
import HummingbirdCore

/// Counts requests and the peak of concurrent ones.
struct CountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let counters: TestServerCounters

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        counters.requestStarted()
        defer { counters.requestEnded() }
        return try await next(request, context)
    }
}

/// Counts connections as Hummingbird opens and closes them.
struct ConnectionCounter: AvailableConnectionsDelegate {
    let counters: TestServerCounters
    func connectionOpened() { counters.connectionOpened() }
    func connectionClosed() { counters.connectionClosed() }
    func isAcceptingNewConnections() -> Bool { true }
}
