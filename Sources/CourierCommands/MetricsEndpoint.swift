import CourierLoad
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// `--metrics-port`: a run's live ``LoadMetrics`` on `GET /metrics`, for Prometheus to scrape.
struct MetricsEndpoint {
    /// Where the endpoint listens: `http://host:port/metrics`.
    let url: String
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// Starts listening on `host:port` (0 picks a free port) and returns once it does.
    static func start(_ metrics: LoadMetrics, host: String, port: Int) async throws -> MetricsEndpoint {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: LoadMetrics.contentType],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        var logger = Logger(label: "courier.metrics")
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
                              onServerRunning: { channel in
                                  continuation.yield(channel.localAddress?.port ?? 0)
                                  continuation.finish()
                              },
                              logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            defer { continuation.finish() } // a port that cannot be bound ends the wait below
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), bound > 0 else {
            task.cancel()
            if case .failure(let error) = await task.result { throw MetricsEndpointError(port: port, reason: "\(error)") }
            throw MetricsEndpointError(port: port, reason: "the listener did not start")
        }
        return MetricsEndpoint(url: "http://\(host):\(bound)/metrics", group: group, task: task)
    }

    /// Stops listening: gracefully, and after a second whatever scrape is left is cut.
    func stop() async {
        await group.triggerGracefulShutdown()
        let task = task
        let deadline = Task {
            try await Task.sleep(for: .seconds(1))
            task.cancel()
        }
        _ = await task.result
        deadline.cancel()
    }
}

struct MetricsEndpointError: Error, CustomStringConvertible {
    let port: Int
    let reason: String
    var description: String { "--metrics-port \(port): cannot listen: \(reason)" }
}
