import CourierLoad
import CourierTestServer
import Foundation
import Hummingbird
import Logging

/// `--metrics-port`: a run's live ``LoadMetrics`` on `GET /metrics`, for Prometheus to scrape.
struct MetricsEndpoint {
    /// Where the endpoint listens: `http://host:port/metrics`.
    let url: String
    private let application: RunningApplication

    /// Starts listening on `host:port` (0 picks a free port) and returns once it does.
    static func start(_ metrics: LoadMetrics, host: String, port: Int) async throws -> MetricsEndpoint {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: LoadMetrics.contentType],
                     body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        var logger = Logger(label: "courier.metrics")
        logger.logLevel = .critical
        do {
            let application = try await RunningApplication.start(
                router: router, configuration: ApplicationConfiguration(address: .hostname(host, port: port)), logger: logger)
            return MetricsEndpoint(url: "http://\(host):\(application.port)/metrics", application: application)
        } catch TestServerError.couldNotStart(let reason) {
            throw MetricsEndpointError(port: port, reason: reason)
        }
    }

    /// Stops listening: gracefully, and after a second whatever scrape is left is cut.
    func stop() async {
        await application.stop(grace: .seconds(1))
    }
}

struct MetricsEndpointError: Error, CustomStringConvertible {
    let port: Int
    let reason: String
    var description: String { "--metrics-port \(port): cannot listen: \(reason)" }
}
