import Courier
import CourierTestServer
import Foundation

// Starts the embedded test server, sends 1,000 concurrent requests through one service and
// prints what happened. Run it with `make run`.
let requestCount = 1_000
let server = try await TestServer.start()
let clock = ContinuousClock()

try await withService { service in
    let started = clock.now
    var statuses: [Int: Int] = [:]
    var failures: [String: Int] = [:]
    try await withThrowingTaskGroup(of: Result<Int, any Error>.self) { group in
        for index in 0..<requestCount {
            group.addTask {
                do {
                    return .success(try await service.send(HTTPRequest(url: server.url("/echo?query=\(index)"))).status)
                } catch {
                    return .failure(error)
                }
            }
        }
        for try await result in group {
            switch result {
            case .success(let status): statuses[status, default: 0] += 1
            case .failure(let error): failures["\(error)", default: 0] += 1
            }
        }
    }
    let elapsed = clock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print("Courier \(CourierVersion.version): \(requestCount) concurrent requests to \(server.baseURL)")
    print("  elapsed      \(String(format: "%.1f ms", seconds * 1000))")
    print("  throughput   \(String(format: "%.0f requests/s", Double(requestCount) / seconds))")
    print("  statuses     \(statuses.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))")
    if !failures.isEmpty { print("  failures     \(failures)") }
    print("  server saw   \(server.counters.requests) requests on \(server.counters.connectionsOpened) connections")
    print("  transport    \(await service.stats)")
}
await server.stop()
