@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// Task cancellation at each stage of a transfer, and nothing leaked afterwards.
@Suite struct CancellationTests {
    @Test func cancelledBeforeStartingNeverOpensAConnection() async throws {
        try await withServerAndService { server, service in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await service.send(HTTPRequest(url: server.url("/echo")))
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(server.counters.connectionsOpened == 0)
            let stats = await service.stats
            #expect(stats.openConnections == 0)
            #expect(stats.easyHandles == 0)
            await expectNoLeaks(service)
        }
    }

    @Test func cancelWhileQueuedForAdmission() async throws {
        try await withServerAndService(configure: { $0.limits.connections.maxConcurrentTransfersPerHost = 1 }) { server, service in
            let blocker = Task { try await service.send(HTTPRequest(url: server.url("/delay/30000"))) }
            // At the server, not just admitted: on a slow machine it may not have been sent yet,
            // and the request count below must be the blocker's alone.
            #expect(await eventually { server.counters.inFlight == 1 })
            #expect(await service.stats.runningTransfers == 1)
            let queued = Task { try await service.send(HTTPRequest(url: server.url("/echo"))) }
            #expect(await eventually { await service.stats.queuedTransfers == 1 })
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await queued.value }
            #expect(await service.stats.liveTransfers == 1)
            blocker.cancel()
            await #expect(throws: CancellationError.self) { try await blocker.value }
            await expectNoLeaks(service)
            #expect(server.counters.requests == 1) // the queued one never reached the server
        }
    }

    @Test func cancelWhileQueuedInsideCurlForAConnection() async throws {
        try await withServerAndService(configure: { $0.limits.connections.maxConnectionsPerHost = 1 }) { server, service in
            let blocker = Task { try await service.send(HTTPRequest(url: server.url("/delay/30000"))) }
            #expect(await eventually { server.counters.inFlight == 1 })
            let pending = Task { try await service.send(HTTPRequest(url: server.url("/echo"))) }
            #expect(await eventually { await service.stats.runningTransfers == 2 })
            pending.cancel()
            await #expect(throws: CancellationError.self) { try await pending.value }
            blocker.cancel()
            _ = await blocker.result
            await expectNoLeaks(service)
        }
    }

    @Test func cancelWhileConnecting() async throws {
        let blackhole = BlackholeListener()
        try await withCheckedService(configuration: .suite()) { service in
            let task = Task { try await service.send(HTTPRequest(url: blackhole.url)) }
            #expect(await eventually { await service.stats.openConnections == 1 })
            let started = ContinuousClock.now
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            // Far below the 30 s connect timeout it would otherwise wait for (the bound allows a loaded machine).
            #expect(ContinuousClock.now - started < .seconds(10))
            await expectNoLeaks(service)
            #expect(await eventually { await service.stats.openConnections == 0 })
        }
    }

    @Test func cancelWhileWaitingForHeaders() async throws {
        try await withServerAndService { server, service in
            let task = Task { try await service.send(HTTPRequest(url: server.faultURL("/stall-headers"))) }
            #expect(await eventually { server.counters.connectionsOpen >= 1 })
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            await expectNoLeaks(service)
            #expect(await eventually { await service.stats.openConnections == 0 })
        }
    }

    @Test func cancelMidBody() async throws {
        try await withServerAndService { server, service in
            let task = Task { try await service.send(HTTPRequest(url: server.url("/drip?bytes=1000&chunk=10&interval=50"))) }
            #expect(await eventually { server.counters.inFlight == 1 })
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            await expectNoLeaks(service)
            // A connection aborted mid-body cannot be reused: curl closes it.
            #expect(await eventually { await service.stats.openConnections == 0 })
        }
    }

    @Test func cancelAStreamingConsumerMidBody() async throws {
        try await withServerAndService { server, service in
            let response = try await service.stream(HTTPRequest(url: server.url("/drip?bytes=1000&chunk=10&interval=50")))
            let consumer = Task {
                var count = 0
                for try await chunk in response.body { count += chunk.count }
                return count
            }
            try await Task.sleep(for: .milliseconds(200))
            consumer.cancel()
            await #expect(throws: CancellationError.self) { try await consumer.value }
            #expect(await eventually { await service.stats.liveTransfers == 0 })
            await expectNoLeaks(service)
        }
    }

    @Test func cancellingManyInFlightRequestsLeaksNothing() async throws {
        try await withServerAndService { server, service in
            let group = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<500 { group.addTask { _ = try await service.send(HTTPRequest(url: server.url("/delay/2000"))) } }
                    try await group.waitForAll()
                }
            }
            #expect(await eventually { await service.stats.liveTransfers == 500 })
            group.cancel()
            await #expect(throws: CancellationError.self) { try await group.value }
            await expectNoLeaks(service)
        }
    }

    /// An attempt is built on the caller's thread and handed to the loop in one inbox entry; a
    /// cancellation may reach the loop before that entry does. Whichever comes first, each send
    /// ends once, with its response or `CancellationError`, and nothing is left behind (under
    /// ThreadSanitizer in `make sanitize`, this is also the check that the two never touch the
    /// transfer from two threads).
    @Test func cancellationRacingTheHandOverEndsEachSendOnce() async throws {
        try await withServerAndService { server, service in
            let request = HTTPRequest(url: server.url("/echo"))
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<1_000 {
                    group.addTask {
                        let task = Task {
                            for _ in 0..<(index % 3) { await Task.yield() }
                            return try await service.send(request)
                        }
                        for _ in 0..<(index % 5) { await Task.yield() }
                        task.cancel()
                        do {
                            return try await task.value.status == 200 ? "answered" : "other status"
                        } catch is CancellationError {
                            return "cancelled"
                        }
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(outcomes.values.reduce(0, +) == 1_000)
            #expect(outcomes["other status"] == nil)
            #expect(outcomes["cancelled", default: 0] > 0)
            await expectNoLeaks(service)
        }
    }

    /// A request that passed the service's check before `shutdown()` began and reaches the loop
    /// after every transfer was cancelled is refused there: it ends with `shutdown`, never hangs.
    @Test func sendsRacingShutdownEndAnsweredOrRefused() async throws {
        try await withServerAndService { server, service in
            let request = HTTPRequest(url: server.url("/echo"))
            let senders = Task {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<64 {
                        group.addTask {
                            var last = "none"
                            while true {
                                do {
                                    _ = try await service.send(request)
                                    last = "answered"
                                } catch let error as TransportError where error.kind == TransportError.shutdown.kind {
                                    return last == "none" ? "refused" : "answered, then refused"
                                }
                            }
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
            }
            #expect(await eventually { server.counters.requests >= 200 })
            await service.shutdown()
            let outcomes = try await senders.value
            #expect(outcomes.count == 64)
            #expect(outcomes.allSatisfy { $0.hasSuffix("refused") })
        }
    }
}
