@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import Testing

/// The retry decisions as a pure state machine, without IO.
@Suite struct RetryStateMachineTests {
    func machine(_ policy: RetryPolicy = .default, replayable: Bool = true) -> Box<RetryStateMachine> {
        Box(RetryStateMachine(policy: policy, queryName: "q", replayable: replayable))
    }

    let fixedOne: (ClosedRange<Double>) -> Double = { _ in 1.0 }

    /// The first decision of a fresh machine.
    func first(_ outcome: RetryStateMachine.Outcome, _ policy: RetryPolicy = .default, replayable: Bool = true)
        -> RetryStateMachine.Decision
    {
        var machine = RetryStateMachine(policy: policy, queryName: "q", replayable: replayable)
        return machine.decide(outcome)
    }

    @Test func backoffStartsRandomBetweenOneAndTwoSecondsThenDoubles() {
        let retry = machine()
        var first: [Duration] = []
        for _ in 0..<50 {
            var fresh = RetryStateMachine(policy: .default, queryName: "q", replayable: true)
            if case .retry(let delay) = fresh.decide(.response(status: 503, retryAfter: nil)) { first.append(delay) }
        }
        #expect(first.allSatisfy { $0 >= .seconds(1) && $0 <= .seconds(2) })
        #expect(Set(first).count > 1) // random
        #expect(retry { $0.decide(.response(status: 503, retryAfter: nil), random: fixedOne) } == .retry(after: .seconds(1)))
        #expect(retry { $0.decide(.response(status: 502, retryAfter: nil), random: fixedOne) } == .retry(after: .seconds(2)))
        #expect(retry { $0.decide(.response(status: 504, retryAfter: nil), random: fixedOne) } == .retry(after: .seconds(4)))
    }

    @Test func defaultStatusesAndOptIns() {
        for status in [408, 502, 503, 504] {
            #expect(first(.response(status: status, retryAfter: nil)) != .giveUp)
        }
        for status in [400, 401, 403, 404, 409, 412, 429, 500] {
            #expect(first(.response(status: status, retryAfter: nil)) == .giveUp)
        }
        var optIn = RetryPolicy.default
        optIn.retryableStatuses.formUnion([429, 500])
        #expect(first(.response(status: 429, retryAfter: nil), optIn) != .giveUp)
        #expect(first(.response(status: 500, retryAfter: nil), optIn) != .giveUp)
    }

    @Test func transientTransportFailuresAreRetried() {
        #expect(first(.transportFailure(.connectionLost)) != .giveUp)
        #expect(first(.transportFailure(.timedOut)) != .giveUp)
        #expect(first(.transportFailure(.connectionFailed)) != .giveUp)
        #expect(first(.transportFailure(.hostNotFound)) == .giveUp)
        #expect(first(.transportFailure(.tlsFailure)) == .giveUp)
        var off = RetryPolicy.default
        off.retryTransportErrors = false
        #expect(first(.transportFailure(.connectionLost), off) == .giveUp)
    }

    @Test func retryAfterIsHonouredUpToTheCap() {
        let retry = machine()
        #expect(retry { $0.decide(.response(status: 503, retryAfter: .seconds(7))) } == .retry(after: .seconds(7)))
        #expect(retry { $0.decide(.response(status: 503, retryAfter: .seconds(61))) } == .giveUp)
    }

    @Test func capAndOverallLimits() {
        var policy = RetryPolicy(maxRetries: 10, initialDelay: 1...1, maxDelay: .seconds(5), maxTotalDelay: .seconds(20))
        let retry = machine(policy)
        var delays: [Duration] = []
        while true {
            guard case .retry(let delay) = retry.value.decide(.response(status: 503, retryAfter: nil)) else { break }
            delays.append(delay)
        }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)]) // 17 s; a 6th would pass 20
        policy.maxRetries = 2
        let few = machine(policy)
        #expect(few { $0.decide(.response(status: 503, retryAfter: nil)) } != .giveUp)
        #expect(few { $0.decide(.response(status: 503, retryAfter: nil)) } != .giveUp)
        #expect(few { $0.decide(.response(status: 503, retryAfter: nil)) } == .giveUp)
    }

    @Test func bodiesThatCannotBeReplayedAreNotRetried() {
        #expect(first(.response(status: 503, retryAfter: nil), replayable: false) == .giveUp)
    }

    @Test func customRuleDecidesFirst() {
        var policy = RetryPolicy.default
        policy.shouldRetry = { context in context.status == 409 ? true : (context.status == 503 ? false : nil) }
        #expect(first(.response(status: 409, retryAfter: nil), policy) != .giveUp)
        #expect(first(.response(status: 503, retryAfter: nil), policy) == .giveUp)
        #expect(first(.response(status: 502, retryAfter: nil), policy) != .giveUp) // nil: default rule
    }

    @Test func retryAfterParsesSecondsAndDates() {
        #expect(RetryAfter.parse("120") == .seconds(120))
        let now = Date(timeIntervalSince1970: 784_111_717) // Sun, 06 Nov 1994 08:48:37 GMT
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.parse("soon") == nil)
        #expect(RetryAfter.parse(nil) == nil)
    }
}

/// Retries through the whole pipeline, against the server, on a virtual clock: no test sleeps.
@Suite struct RetryPipelineTests {
    func withRetryingService<T>(policy: RetryPolicy = RetryPolicy(initialDelay: 1...1),
                                _ body: (TestServer, ServiceActor, VirtualClock) async throws -> T) async throws -> T {
        try await withTestServer { server in
            let clock = VirtualClock()
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: clock)
            configuration.retry = policy
            return try await withService(configuration: configuration) { service in try await body(server, service, clock) }
        }
    }

    @Test func threeOhThreeTwiceThenSuccess() async throws {
        try await withRetryingService { server, service, clock in
            let note = try await service.execute(Notes.flaky("a", failures: 2))
            #expect(note.json["attempts"]?.intValue == 3)
            #expect(clock.sleeps == [.seconds(1), .seconds(2)])
            #expect(server.counters.requests == 3)
        }
    }

    @Test func retryAfterFromTheServerIsHonoured() async throws {
        try await withRetryingService { _, service, clock in
            _ = try await service.execute(Notes.flaky("b", failures: 2, retryAfter: 7))
            #expect(clock.sleeps == [.seconds(7), .seconds(7)])
        }
    }

    @Test func givingUpThrowsTheLastAPIError() async throws {
        try await withRetryingService(policy: RetryPolicy(maxRetries: 2, initialDelay: 1...1)) { server, service, clock in
            let error = await #expect(throws: APIError.self) { try await service.execute(Notes.flaky("c", failures: 5)) }
            #expect(error?.status == 503)
            #expect(clock.sleeps.count == 2)
            #expect(server.counters.requests == 3)
        }
    }

    @Test func fourTwentyNineOnlyWhenOptedInPerQuery() async throws {
        try await withRetryingService { _, service, clock in
            await #expect(throws: APIError.self) { try await service.execute(Notes.flaky("d", failures: 1, status: 429)) }
            var query = Notes.flaky("e", failures: 1, status: 429)
            var policy = RetryPolicy(initialDelay: 1...1)
            policy.retryableStatuses.insert(429)
            query.execution.retry = policy
            _ = try await service.execute(query)
            #expect(clock.sleeps == [.seconds(1)])
        }
    }

    @Test func resetsAreRetried() async throws {
        try await withRetryingService(policy: RetryPolicy(maxRetries: 3, initialDelay: 1...1)) { server, service, clock in
            var query = Query<Note>(api: TestAPIs.notes, name: "reset", path: "/reset-mid-body")
            query.execution.rootURL = server.faultURL
            await #expect(throws: TransportError.connectionLost) { try await service.execute(query) }
            #expect(clock.sleeps == [.seconds(1), .seconds(2), .seconds(4)])
        }
    }

    @Test func nonReplayableBodiesAreSentOnce() async throws {
        try await withRetryingService { server, service, clock in
            let chunks = AsyncStream<Data> { $0.yield(Data("{}".utf8)); $0.finish() }
            let mock = MockTransport()
            mock.on(path: "/notes/v1/notes", sequence: [try .googleError(status: 503, message: "busy"), try .json(["id": "x"])])
            var query = Notes.insert(Note())
            query.execution.testHandler = { request in
                var request = request
                request.body = .stream(chunks) // as an upload stream would be
                return try await mock.handler(request)
            }
            // The handler sees a replayable body (the query's JSON), so this retries:
            _ = try await service.execute(query)
            #expect(mock.requests.count == 2)
            _ = clock
            _ = server
        }
    }
}

/// Credential refresh after a 401: once, then the error stands.
@Suite struct UnauthorizedRefreshTests {
    actor CountingAuthorizer: Authorizer {
        var token = 1
        var invalidations = 0
        func authorize(_ request: inout HTTPRequest) async throws {
            request.headers["Authorization"] = "Bearer t\(token)"
        }
        func invalidate(_ rejected: HTTPRequest) async {
            invalidations += 1
            token += 1
        }
    }

    @Test func fourOhOneRefreshesOnceAndRetriesOnce() async throws {
        let authorizer = CountingAuthorizer()
        let mock = MockTransport()
        mock.on(path: "/notes/v1/notes/n1") { request in
            request.headers["Authorization"] == "Bearer t2"
                ? try .json(["id": "n1"]) : try .googleError(status: 401, message: "expired", reason: "authError")
        }
        var configuration = ServiceActor.Configuration.suite()
        configuration.authorizer = authorizer
        configuration.testHandler = mock.handler
        try await withService(configuration: configuration) { service in
            let note = try await service.execute(Notes.get("n1"))
            #expect(note.id == "n1")
            #expect(await authorizer.invalidations == 1)
            #expect(mock.requests.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t2"])

            // A second 401 in the same execution is not refreshed again.
            mock.on(path: "/notes/v1/notes/n2") { _ in try .googleError(status: 401, message: "no") }
            do { _ = try await service.execute(Notes.get("n2")) } catch APIError.unauthorized {} catch { Issue.record("\(error)") }
            #expect(await authorizer.invalidations == 2)
            #expect(mock.requests.count == 4)
        }
    }
}
