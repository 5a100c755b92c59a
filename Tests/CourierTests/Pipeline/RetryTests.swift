@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

/// Retries through the whole pipeline, against the server, on a virtual clock: no test sleeps.
@Suite struct RetryPipelineTests {
    func withRetryingService<T>(policy: RetryPolicy = RetryPolicy(initialDelay: 1...1),
                                _ body: (TestServer, ServiceActor, VirtualClock) async throws -> T) async throws -> T {
        try await withTestServer { server in
            let clock = VirtualClock()
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: clock)
            configuration.retry = policy
            return try await withCheckedService(configuration: configuration) { service in try await body(server, service, clock) }
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

    @Test func fourTwentyNineByDefaultAndAPerQueryPolicyOverrides() async throws {
        try await withRetryingService { _, service, clock in
            _ = try await service.execute(Notes.flaky("d", failures: 1, status: 429))
            #expect(clock.sleeps == [.seconds(1)])
            var query = Notes.flaky("e", failures: 1, status: 429)
            var policy = RetryPolicy(initialDelay: 1...1)
            policy.retryableStatuses.remove(429)
            query.execution.retry = policy
            await #expect(throws: APIError.self) { try await service.execute(query) }
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
            query.execution.idempotency = .always // an insert is a POST: re-sent only when declared safe
            query.execution.testHandler = { request in
                var request = request
                request.body = .stream(chunks) // as an upload stream would be
                return try await mock.handler(request)
            }
            // The handler sees a replayable body (the query's JSON), so this retries:
            _ = try await service.execute(query)
            #expect(mock.requests.count == 2)
            // Undeclared, the POST that was answered 503 is not sent again: the server had it.
            mock.on(path: "/notes/v1/notes", sequence: [try .googleError(status: 503, message: "busy"), try .json(["id": "x"])])
            query.execution.idempotency = .automatic
            await #expect(throws: APIError.self) { try await service.execute(query) }
            #expect(mock.requests.count == 3)
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
        configuration.auth.authorizer = authorizer
        configuration.testing.handler = mock.handler
        try await withCheckedService(configuration: configuration) { service in
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
