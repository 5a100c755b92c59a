import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The test server's own promises, which every other suite builds on: faults consumed per
/// header value, counters that see what the client sent, and the byte pattern it serves.
@Suite struct FaultMiddlewareTests {
    @Test func aCountedFaultIsConsumedPerHeaderValue() async throws {
        try await withServerAndService(configure: { $0.retry = .disabled }) { server, service in
            let run = UUID().uuidString
            var statuses: [Int] = []
            for _ in 0..<3 {
                var request = HTTPRequest(method: .get, url: server.url("/echo"))
                request.headers["X-Courier-Fault"] = "503x2;run=\(run)"
                statuses.append(try await service.send(request).status)
            }
            #expect(statuses == [503, 503, 200])
            var other = HTTPRequest(method: .get, url: server.url("/echo"))
            other.headers["X-Courier-Fault"] = "503x2;run=\(UUID().uuidString)"
            #expect(try await service.send(other).status == 503) // a new run has its own count
        }
    }

    @Test func countersSeeEveryRequestAndConnection() async throws {
        try await withServerAndService { server, service in
            let before = server.counters.requests
            for _ in 0..<5 { _ = try await service.send(HTTPRequest(method: .get, url: server.url("/echo"))) }
            #expect(server.counters.requests - before == 5)
            #expect(server.counters.connectionsOpened >= 1)
            #expect(server.counters.inFlight == 0)
        }
    }

    @Test func bytesFollowThePattern() async throws {
        try await withServerAndService { server, service in
            let response = try await service.send(HTTPRequest(method: .get, url: server.url("/bytes/100000")))
            #expect(response.status == 200)
            #expect(Array(response.body) == TestPattern.bytes(count: 100_000))
            #expect(TestPattern.Hasher.of(response.body).hex == TestPattern.Hasher.of(Data(TestPattern.bytes(count: 100_000))).hex)
        }
    }
}
