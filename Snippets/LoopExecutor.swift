// Request-heavy code on the loop thread: no thread hop per request.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start()
var configuration = ServiceActor.Configuration()
configuration.limits.connections.maxConnectionsPerHost = 32

try await withService(configuration: configuration) { service in
    // Every child task inherits the preference, so sends and resumes stay on the loop thread.
    let total = try await withTaskExecutorPreference(service.executor) {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<2_000 {
                group.addTask { try await service.send(HTTPRequest(url: server.url("/echo?n=\(index)"))).body.count }
            }
            var bytes = 0
            for try await count in group { bytes += count }
            return bytes
        }
    }
    print("2000 requests, \(total) body bytes; transport now holds:", await service.stats)
}
await server.stop()
