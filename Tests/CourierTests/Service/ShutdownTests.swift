@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

@Suite struct ShutdownTests {
    @Test func shutdownFailsInFlightTransfersAndRefusesNewOnes() async throws {
        try await withTestServer { server in
            let service = try ServiceActor(configuration: .suite())
            let inFlight = (0..<50).map { _ in Task { try await service.send(HTTPRequest(url: server.url("/delay/30000"))) } }
            #expect(await eventually { await service.stats.liveTransfers == 50 })
            let started = ContinuousClock.now
            await service.shutdown()
            #expect(ContinuousClock.now - started < .seconds(20)) // not the server's 30 s
            for task in inFlight {
                await #expect(throws: TransportError.shutdown) { try await task.value }
            }
            await #expect(throws: TransportError.shutdown) {
                try await service.send(HTTPRequest(url: server.url("/echo")))
            }
            #expect(!service.executor.isCurrent)
            await service.shutdown() // a second call returns
        }
    }

    @Test func drainingShutdownLetsTransfersFinish() async throws {
        try await withTestServer { server in
            let service = try ServiceActor(configuration: .suite())
            let inFlight = (0..<10).map { _ in Task { try await service.send(HTTPRequest(url: server.url("/delay/300"))) } }
            #expect(await eventually { await service.stats.liveTransfers == 10 })
            await service.shutdown(.drain)
            for task in inFlight { #expect(try await task.value.status == 200) }
        }
    }

    @Test func shutdownFromTheLoopExecutorCompletes() async throws {
        try await withTestServer { server in
            let service = try ServiceActor(configuration: .suite())
            try await withTaskExecutorPreference(service.executor) {
                _ = try await service.send(HTTPRequest(url: server.url("/echo")))
                await service.shutdown()
            }
        }
    }

    @Test func releasingAServiceWithoutShutdownStillStopsItsLoop() async throws {
        try await withTestServer { server in
            weak var weakLoop: CurlEventLoop?
            do {
                let service = try ServiceActor(configuration: .suite())
                weakLoop = service.executor
                _ = try await service.send(HTTPRequest(url: server.url("/echo")))
            }
            #expect(await eventually { weakLoop == nil })
            #expect(await eventually { server.counters.connectionsOpen == 0 })
        }
    }

    @Test func manyServicesComeAndGo() async throws {
        try await withTestServer { server in
            for _ in 0..<50 {
                try await withCheckedService(configuration: .suite()) { service in
                    _ = try await service.send(HTTPRequest(url: server.url("/echo")))
                }
            }
            #expect(await eventually { server.counters.connectionsOpen == 0 })
        }
    }
}
