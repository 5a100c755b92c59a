import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The same closed loop on URLSession (FoundationNetworking, itself on libcurl multi on Linux).
enum URLSessionLoad {
    static func run(url: URL, concurrency: Int, connections: Int, work: ClosedLoop.Work) async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = 30
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        try await ClosedLoop.measure(concurrency: concurrency, work: work) {
            let (data, response) = try await session.data(from: url)
            precondition((response as? HTTPURLResponse)?.statusCode == 200 && !data.isEmpty)
        }
    }
}
