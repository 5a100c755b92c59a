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

    /// glibc hands an ended thread's `pthread_t` to the next thread it creates (the stack that
    /// holds it is cached): once the loop's thread has ended, a new thread with its identity must
    /// not pass for the loop. The check waits until the kernel has ended the thread, so the next
    /// thread made takes its stack.
    @Test func aThreadThatInheritsTheEndedLoopThreadsIdentityIsNotTheLoop() async throws {
        let service = try ServiceActor(configuration: .suite())
        let loop = service.executor
        // The thread's identity, and its entry in /proc ("<pid>/task/<tid>"), there while it lives.
        let (loopThread, loopTask) = await withCheckedContinuation { continuation in
            loop.execute {
                let task = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                continuation.resume(returning: (UInt(pthread_self()), "/proc/" + task))
            }
        }
        await service.shutdown()
        for _ in 0..<400 where FileManager.default.fileExists(atPath: loopTask) { try await Task.sleep(for: .milliseconds(5)) }
        var reused = false
        for _ in 0..<20 where !reused {
            let (identity, passesForTheLoop) = Self.onANewThread { (UInt(pthread_self()), loop.isCurrent) }
            #expect(!passesForTheLoop)
            reused = identity == loopThread
        }
        // Without a reuse the check above saw nothing it could fail on: say so rather than pass quietly.
        withKnownIssue("glibc did not give the ended loop thread's identity to a new thread", isIntermittent: true) {
            #expect(reused)
        }
    }

    /// Runs `body` on a thread of its own, made with default attributes (as the loop's was).
    private static func onANewThread(_ body: @escaping @Sendable () -> (UInt, Bool)) -> (UInt, Bool) {
        final class Run: @unchecked Sendable {
            let body: @Sendable () -> (UInt, Bool)
            var result = (UInt(0), false)
            init(_ body: @escaping @Sendable () -> (UInt, Bool)) { self.body = body }
        }
        let run = Run(body)
        var thread = pthread_t()
        pthread_create(&thread, nil, { context in
            let run = Unmanaged<Run>.fromOpaque(context!).takeRetainedValue()
            run.result = run.body()
            return nil
        }, Unmanaged.passRetained(run).toOpaque())
        pthread_join(thread, nil)
        return run.result
    }

    @Test func drainingShutdownLetsTransfersFinish() async throws {
        try await withTestServer { server in
            let service = try ServiceActor(configuration: .suite())
            // All ten wait at the server's gate, which opens only once the shutdown has begun.
            let inFlight = (0..<10).map { _ in Task { try await service.send(HTTPRequest(url: server.url("/gate/drain"))) } }
            #expect(await eventually { await service.stats.liveTransfers == 10 })
            let shutdown = Task { await service.shutdown(.drain) }
            #expect(await eventually { !service.isAccepting })
            server.gates.open("drain")
            await shutdown.value
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
