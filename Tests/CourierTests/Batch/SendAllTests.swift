@testable import Courier
import CourierTestServer
import CourierTesting
import CourierTestSupport
import Foundation
import Testing

/// `sendAll`: many raw requests through one window of workers, results as they complete.
@Suite struct SendAllTests {
    static func delay(_ server: TestServer, _ milliseconds: Int) -> HTTPRequest {
        HTTPRequest(url: server.baseURL.appendingPathComponent("delay/\(milliseconds)"))
    }

    /// How many of the run's results are `CancellationError`s.
    static func cancelled(in results: SendAllResults) async -> Int {
        var cancelled = 0
        for await (_, result) in results {
            if case .failure(is CancellationError) = result { cancelled += 1 }
        }
        return cancelled
    }

    @Test func everyRequestGetsOneResultByIndexWithinTheWindow() async throws {
        try await withNotesService(seed: 40) { server, service in
            let requests = (1...40).map { HTTPRequest(url: server.baseURL.appendingPathComponent(String(format: "notes/v1/notes/note-%04d", $0))) }
                + [HTTPRequest(url: server.baseURL.appendingPathComponent("notes/v1/notes/missing"))]
            server.counters.resetMaxInFlight()
            var statuses: [Int: Int] = [:]
            for await (index, result) in service.sendAll(requests, maxInFlight: 4) {
                #expect(statuses[index] == nil, "index \(index) twice")
                let response = try result.get()
                statuses[index] = response.status
                if response.status == 200 {
                    #expect(String(decoding: response.body, as: UTF8.self).contains(String(format: "note-%04d", index + 1)))
                }
            }
            #expect(statuses.count == 41)
            #expect(statuses[40] == 404) // a status is a response, as with send
            #expect(statuses.values.filter { $0 == 200 }.count == 40)
            #expect(server.counters.maxInFlight <= 4)

            // Nothing to send: the sequence ends at once.
            var none = 0
            for await _ in service.sendAll([HTTPRequest]()) { none += 1 }
            #expect(none == 0)
        }
    }

    /// Any sequence, not only an array: `sendAll` copies it into an array in the caller's module
    /// (specialised there), and each index is the request's position in the sequence.
    @Test func aLazySequenceIsSentInItsOrder() async throws {
        try await withNotesService(seed: 12) { server, service in
            let requests = (1...12).lazy.map { HTTPRequest(url: server.baseURL.appendingPathComponent(String(format: "notes/v1/notes/note-%04d", $0))) }
            var seen = Set<Int>()
            for await (index, result) in service.sendAll(requests, maxInFlight: 3) {
                let response = try result.get()
                #expect(response.status == 200)
                #expect(String(decoding: response.body, as: UTF8.self).contains(String(format: "note-%04d", index + 1)))
                #expect(seen.insert(index).inserted, "index \(index) twice")
            }
            #expect(seen == Set(0..<12))
        }
    }

    @Test func theWindowIsKeptFull() async throws {
        try await withNotesService(configure: { $0.limits.connections.maxConnectionsPerHost = 8 }) { server, service in
            server.counters.resetMaxInFlight()
            // Every request waits at a gate until eight are at the server at once, however slowly
            // their connections open (a 100 ms delay, then 1 s, were guesses a loaded machine
            // under ThreadSanitizer could outlast); a ninth would show in the peak.
            let gated = Array(repeating: HTTPRequest(url: server.url("/gate/window")), count: 16)
            let run = Task {
                var statuses: [Int] = []
                for await (_, result) in service.sendAll(gated, maxInFlight: 8) { statuses.append(try result.get().status) }
                return statuses
            }
            try await openGate("window", of: server, when: 8)
            let statuses = try await run.value
            #expect(statuses == Array(repeating: 200, count: 16))
            #expect(server.counters.maxInFlight == 8)

            // A slot is refilled as soon as its request ends, not when the round ends: beside one
            // slow request, the other slot runs all ten quick ones, which end first (the slow one
            // is then cancelled by leaving the loop).
            var order: [Int] = []
            let requests = [Self.delay(server, 30_000)] + Array(repeating: Self.delay(server, 20), count: 10)
            for await (index, result) in service.sendAll(requests, maxInFlight: 2) {
                #expect((try? result.get().status) == 200)
                order.append(index)
                if order.count == 10 { break }
            }
            #expect(order.sorted() == Array(1...10), "\(order)")
            #expect(await eventually { await service.stats.liveTransfers == 0 })

        }
    }

    @Test func failFastCancelsTheRestAndEachStillGetsItsResult() async throws {
        try await withNotesService { server, service in
            var requests = [HTTPRequest(url: URL(string: "http://127.0.0.1:1/refused")!)] // a transport error
            requests += Array(repeating: Self.delay(server, 30_000), count: 10)
            let started = ContinuousClock.now
            var failures: [Int: any Error] = [:]
            var successes = 0
            for await (index, result) in service.sendAll(requests, maxInFlight: 3, failFast: true) {
                switch result {
                case .success: successes += 1
                case .failure(let error): failures[index] = error
                }
            }
            #expect(ContinuousClock.now - started < .seconds(30)) // no 30 s request ran to its end
            #expect(successes == 0)
            #expect(failures.count == 11)
            #expect(failures[0] is TransportError)
            #expect((1...10).allSatisfy { failures[$0] is CancellationError })
            #expect(await eventually { await service.stats.liveTransfers == 0 })
        }
    }

    @Test func cancellingTheConsumerOrTheRunsIDOrEndingEarlyCancelsEveryRequest() async throws {
        try await withNotesService(configure: { $0.limits.connections.maxConnectionsPerHost = 10 }) { server, service in
            let slow = Array(repeating: Self.delay(server, 30_000), count: 10)
            // The consuming task is cancelled while it waits.
            let consumer = Task { await Self.cancelled(in: service.sendAll(slow, maxInFlight: 10)) }
            #expect(await eventually { server.counters.inFlight == 10 })
            consumer.cancel()
            #expect(await consumer.value == 10)
            #expect(await eventually { await service.stats.liveTransfers == 0 })

            // cancel(requestID:) with the run's ID.
            let named = Task { await Self.cancelled(in: service.sendAll(slow, maxInFlight: 5, requestID: "many")) }
            #expect(await eventually { await service.stats.liveTransfers == 5 })
            await service.cancel(requestID: "many")
            #expect(await named.value == 10)

            // One request's own ID cancels it alone.
            let quick = Self.delay(server, 50)
            var own = RequestOptions()
            own.requestID = "just-this"
            let mixed = Task {
                var outcome: [Int: Bool] = [:]
                for await (index, result) in service.sendAll([(slow[0], own), (quick, RequestOptions())], maxInFlight: 2) {
                    outcome[index] = (try? result.get()) != nil
                }
                return outcome
            }
            #expect(await eventually { service.requests.isRunning("just-this") })
            await service.cancel(requestID: "just-this")
            #expect(await mixed.value == [0: false, 1: true])

            // Ending the iteration early.
            for await _ in service.sendAll([quick] + slow, maxInFlight: 4) { break }
            #expect(await eventually { await service.stats.liveTransfers == 0 })
            await expectNoLeaks(service)
        }
    }

    /// One at a time the consumer's task sends each request itself: the same promises, in
    /// `requests`' order, never two at once.
    @Test func oneAtATimeTheConsumerSendsEachRequestWithTheSamePromises() async throws {
        try await withNotesService(seed: 5) { server, service in
            let requests = (1...5).map { HTTPRequest(url: server.baseURL.appendingPathComponent(String(format: "notes/v1/notes/note-%04d", $0))) }
            server.counters.resetMaxInFlight()
            var order: [Int] = []
            for await (index, result) in service.sendAll(requests, maxInFlight: 1) {
                let status = try result.get().status
                #expect(status == 200)
                order.append(index)
            }
            #expect(order == Array(0..<5))
            #expect(server.counters.maxInFlight == 1)

            // failFast: the first failure skips the rest, each still gets CancellationError.
            var outcomes: [Int: String] = [:]
            let refused = HTTPRequest(url: URL(string: "http://127.0.0.1:1/refused")!)
            for await (index, result) in service.sendAll([requests[0], refused, requests[1], requests[2]], maxInFlight: 1, failFast: true) {
                switch result {
                case .success(let response): outcomes[index] = "\(response.status)"
                case .failure(let error): outcomes[index] = error is CancellationError ? "cancelled" : "failed"
                }
            }
            #expect(outcomes == [0: "200", 1: "failed", 2: "cancelled", 3: "cancelled"])

            // Cancelling the consumer cancels the request it is sending and skips the rest.
            let slow = Array(repeating: Self.delay(server, 30_000), count: 4)
            let consumer = Task { await Self.cancelled(in: service.sendAll(slow, maxInFlight: 1)) }
            #expect(await eventually { server.counters.inFlight == 1 })
            consumer.cancel()
            #expect(await consumer.value == 4)

            // With the run's ID, cancel(requestID:) reaches it between the consumer's calls too.
            let named = Task { await Self.cancelled(in: service.sendAll(slow, maxInFlight: 1, requestID: "one-by-one")) }
            #expect(await eventually { await service.stats.liveTransfers == 1 })
            await service.cancel(requestID: "one-by-one")
            #expect(await named.value == 4)

            // Ending early leaves nothing running and starts nothing more. A server of its own
            // counts the requests: the cancelled ones above may still reach the first one late.
            try await withTestServer { quiet in
                let rest = Array(repeating: Self.delay(quiet, 30_000), count: 3)
                for await _ in service.sendAll([Self.delay(quiet, 10)] + rest, maxInFlight: 1) { break }
                #expect(await eventually { await service.stats.liveTransfers == 0 })
                try await Task.sleep(for: .milliseconds(100))
                #expect(quiet.counters.requests == 1)
            }
            await expectNoLeaks(service)
        }
    }
}
