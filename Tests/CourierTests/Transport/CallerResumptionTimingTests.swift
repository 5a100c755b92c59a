@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// A task without an executor preference, resumed by the loop while nothing else is in flight,
/// continues on the loop thread (one thread per request, as C); otherwise, on the pool.
///
/// In the timed set (Makefile): a caller preempted for over 1 ms in place pauses running in
/// place, and in the parallel suite a request resumed on the pool waited seconds for a thread,
/// so these run alone, after the rest.
@Suite struct CallerResumptionTimingTests {
    /// Where the code after each of `count` sequential sends ran: true for the loop thread.
    private static func continuations(_ service: ServiceActor, _ url: URL, count: Int) async throws -> [Bool] {
        // A detached task: no executor preference, and no inherited isolation.
        try await Task.detached {
            var onLoop: [Bool] = []
            for _ in 0..<count {
                let response = try await service.send(HTTPRequest(url: url))
                #expect(response.status == 200)
                onLoop.append(service.executor.isCurrent)
            }
            return onLoop
        }.value
    }

    /// Sends one request after another until `inARow` in a row continue on the loop (at most
    /// 30 s): a caller that runs over 1 ms in place (a process's first requests, a debug build
    /// preempted in the parallel suite) pauses running in place for a while.
    private static func untilInARow(_ inARow: Int, _ service: ServiceActor, _ url: URL) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var count = 0
        while count < inARow {
            count = try await continuations(service, url, count: 1)[0] ? count + 1 : 0
            try #require(ContinuousClock.now < deadline, "not \(inARow) callers in a row continued on the loop in 30 s")
        }
    }

    @Test func oneRequestAtATimeContinuesOnTheLoop() async throws {
        try await withServerAndService { server, service in
            let before = await service.stats.callersResumedInPlace
            try await Self.untilInARow(10, service, server.url("/json/100"))
            #expect(await service.stats.callersResumedInPlace >= before + 10)
            await expectNoLeaks(service)
        }
    }

    /// The window users write by hand, a child task per request at one in flight: the child,
    /// the parent it resumes and the next child all continue on the loop.
    @Test func aChildTaskPerRequestAndItsParentContinueOnTheLoop() async throws {
        try await withServerAndService { server, service in
            let url = server.url("/json/100")
            let inARow = try await Task.detached {
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    let deadline = ContinuousClock.now + .seconds(30)
                    var inARow = 0
                    group.addTask { _ = try await service.send(HTTPRequest(url: url)); return service.executor.isCurrent }
                    while let childOnLoop = try await group.next() {
                        inARow = childOnLoop && service.executor.isCurrent ? inARow + 1 : 0
                        guard inARow < 10, ContinuousClock.now < deadline else { break }
                        group.addTask { _ = try await service.send(HTTPRequest(url: url)); return service.executor.isCurrent }
                    }
                    return inARow
                }
            }.value
            #expect(inARow == 10, "not 10 children and parents in a row on the loop in 30 s")
            await expectNoLeaks(service)
        }
    }

    /// `sendAll` at one in flight: its consumer continues on the loop, where its worker runs.
    @Test func sendAllsConsumerContinuesOnTheLoop() async throws {
        try await withServerAndService { server, service in
            let requests = Array(repeating: HTTPRequest(url: server.url("/json/100")), count: 2_000)
            let inARow = await Task.detached {
                var inARow = 0
                for await (_, result) in service.sendAll(requests, maxInFlight: 1) {
                    #expect((try? result.get().status) == 200)
                    inARow = service.executor.isCurrent ? inARow + 1 : 0
                    if inARow == 10 { break }
                }
                return inARow
            }.value
            #expect(inARow == 10, "not 10 results in a row consumed on the loop in 2,000")
            #expect(await eventually { await service.stats.liveTransfers == 0 })
        }
    }

    @Test func withAnotherRequestInFlightCallersGoToThePool() async throws {
        try await withServerAndService { server, service in
            let slow = Task.detached { try await service.send(HTTPRequest(url: server.url("/delay/30000"))) }
            #expect(await eventually { await service.stats.liveTransfers == 1 })
            let before = await service.stats.callersResumedInPlace
            let onLoop = try await Self.continuations(service, server.url("/json/100"), count: 10)
            let after = await service.stats
            slow.cancel()
            let slowResult = await slow.result
            #expect(after.liveTransfers == 1, "the slow request ended early: \(slowResult)")
            #expect(after.callersResumedInPlace == before, "\(after)")
            #expect(onLoop.allSatisfy { !$0 }, "continued on the loop: \(onLoop); \(after)")
        }
    }

    @Test func turnedOffEveryCallerGoesToThePool() async throws {
        try await withServerAndService(configure: { $0.transport.resumesCallersInPlace = false }) { server, service in
            let onLoop = try await Self.continuations(service, server.url("/json/100"), count: 10)
            #expect(onLoop.allSatisfy { !$0 }, "continued on the loop: \(onLoop)")
            #expect(await service.stats.callersResumedInPlace == 0)
        }
    }

    @Test func aCallerThatComputesForLongIsNotRunInPlaceAgainAtOnce() async throws {
        try await withServerAndService { server, service in
            let url = server.url("/json/100")
            // 100 ms on the loop after two responses in a row: no caller in place for 10 s after
            // (in the parallel suite a request resumed on the pool may wait seconds for a thread).
            let spin: UInt64 = 100_000_000
            let (spunUntil, later) = try await Task.detached { () async throws -> (UInt64, [(onLoop: Bool, at: UInt64)]) in
                let deadline = ContinuousClock.now + .seconds(30)
                var spunUntil: UInt64 = 0
                var longRunsInPlace = 0
                while longRunsInPlace < 2 {
                    _ = try await service.send(HTTPRequest(url: url))
                    try #require(ContinuousClock.now < deadline, "no two callers continued on the loop in 30 s")
                    // Every run in place here is long, so two of them are two in a row to the loop.
                    guard service.executor.isCurrent else { continue }
                    spunUntil = MonotonicClock.nanoseconds() + spin
                    while MonotonicClock.nanoseconds() < spunUntil {}
                    longRunsInPlace += 1
                }
                var later: [(onLoop: Bool, at: UInt64)] = []
                for _ in 0..<5 {
                    _ = try await service.send(HTTPRequest(url: url))
                    later.append((service.executor.isCurrent, MonotonicClock.nanoseconds()))
                }
                return (spunUntil, later)
            }.value
            // The run in place ended after `spunUntil`, so its pause lasts at least until this.
            let paused = spunUntil + spin * CallerResumption.pauseFactor
            let withinPause = later.filter { $0.at < paused }
            #expect(!withinPause.isEmpty, "no request completed within the pause (a loaded machine)")
            #expect(withinPause.allSatisfy { !$0.onLoop }, "continued on the loop within the pause: \(withinPause)")
        }
    }
}
