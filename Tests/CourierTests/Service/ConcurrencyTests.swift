@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

@Suite struct ConcurrencyTests {
    @Test func thousandConcurrentRequestsInOneTaskGroup() async throws {
        try await withServerAndService { server, service in
            let statuses = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<1000 {
                    group.addTask {
                        let response = try await service.send(HTTPRequest(url: server.url("/echo?i=\(index)")))
                        return (response.status, try Echo(response).query)
                    }
                }
                var seen = Set<String>()
                var ok = 0
                for try await (status, query) in group {
                    if status == 200 { ok += 1 }
                    seen.insert(query)
                }
                return (ok, seen.count)
            }
            #expect(statuses.0 == 1000)
            #expect(statuses.1 == 1000) // every response matched its own request
            #expect(server.counters.connectionsOpened <= 10) // the per-host default
            await expectNoLeaks(service)
        }
    }

    @Test func perHostConnectionLimitIsHonoured() async throws {
        try await withServerAndService(configure: { $0.limits.connections.maxConnectionsPerHost = 3 }) { server, service in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<30 { group.addTask { _ = try await service.send(HTTPRequest(url: server.url("/delay/20"))) } }
                try await group.waitForAll()
            }
            #expect(server.counters.maxInFlight <= 3)
            #expect(server.counters.connectionsOpened == 3)
        }
    }

    /// Regression: waiting to multiplex (PIPEWAIT) on plain http parked every request behind a
    /// slow first one until its response arrived.
    @Test func aSlowFirstRequestDoesNotHoldBackOthersToTheSameHost() async throws {
        try await withServerAndService { server, service in
            let slow = Task { try await service.send(HTTPRequest(url: server.url("/delay/30000"))) }
            #expect(await eventually { server.counters.inFlight == 1 })
            let quick = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<5 { group.addTask { try await service.send(HTTPRequest(url: server.url("/echo"))).status } }
                return try await group.reduce(0) { $0 + ($1 == 200 ? 1 : 0) }
            }
            #expect(quick == 5)
            #expect(server.counters.inFlight == 1) // the slow one is still waiting
            slow.cancel()
            _ = await slow.result
        }
    }

    @Test func requestsOnTheLoopExecutorRunOnTheLoopThread() async throws {
        try await withServerAndService { server, service in
            let loop = service.executor
            let onLoop = try await withTaskExecutorPreference(loop) {
                _ = try await service.send(HTTPRequest(url: server.url("/echo")))
                return loop.isCurrent
            }
            #expect(onLoop)
            #expect(!loop.isCurrent)
        }
    }

    @Test func actorIsolationIsTheLoopThread() async throws {
        try await withCheckedService(configuration: .suite()) { service in
            let isLoop = await service.runOnLoopForTesting { service.executor.isCurrent }
            #expect(isLoop)
            // assumeIsolated works from a closure the loop runs outside any actor job.
            let assumed = await withCheckedContinuation { continuation in
                service.executor.execute {
                    let ok = service.assumeIsolated { isolated in isolated.executor.isCurrent }
                    continuation.resume(returning: ok)
                }
            }
            #expect(assumed)
        }
    }

    @Test(arguments: [LoopBackend.epoll, .multiPoll])
    func bothLoopBackendsServeConcurrentRequests(backend: LoopBackend) async throws {
        try await withServerAndService(configure: { $0.transport.loopBackend = backend }) { server, service in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<200 { group.addTask { try await service.send(HTTPRequest(url: server.url("/echo"))).status } }
                for try await status in group { #expect(status == 200) }
            }
            await expectNoLeaks(service)
        }
    }
}

extension ServiceActor {
    func runOnLoopForTesting<T: Sendable>(_ body: () -> T) -> T { body() }
}
