@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

@Suite struct RequestIDTests {
    @Test func everyQueryHasAUniqueRequestID() {
        let ids = (0..<1000).map { _ in Notes.get("x").requestID }
        #expect(Set(ids).count == 1000)
    }

    @Test func cancelByRequestIDWhileInFlight() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                var query = Query<Note>(api: TestAPIs.notes, name: "slow", path: "/delay/30000")
                query.execution.retry = .disabled
                let id = query.requestID
                let task = Task { try await service.execute(query) }
                #expect(await eventually { server.counters.inFlight == 1 })
                let started = ContinuousClock.now
                await service.cancel(requestID: id)
                await #expect(throws: CancellationError.self) { try await task.value }
                #expect(ContinuousClock.now - started < .seconds(20)) // not the server's 30 s
                await expectNoLeaks(service)
            }
        }
    }

    @Test func cancelByRequestIDDuringARetryWait() async throws {
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.retry = RetryPolicy(initialDelay: 30...30) // a real 30 s wait
            try await withCheckedService(configuration: configuration) { service in
                let query = Notes.flaky("wait", failures: 5)
                let task = Task { try await service.execute(query) }
                #expect(await eventually { server.counters.requests == 1 })
                try await Task.sleep(for: .milliseconds(50))
                await service.cancel(requestID: query.requestID)
                await #expect(throws: CancellationError.self) { try await task.value }
                #expect(server.counters.requests == 1)
            }
        }
    }

    @Test func cancellingAFinishedOrUnknownRequestDoesNothing() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let query = Notes.get("note-0001")
                _ = try await service.execute(query)
                await service.cancel(requestID: query.requestID)
                await service.cancel(requestID: "never-existed")
                #expect(try await service.execute(Notes.get("note-0001")).id == "note-0001")
            }
        }
    }

    @Test func taskCancellationCancelsTheQuery() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let task = Task { try await service.execute(Query<Note>(api: TestAPIs.notes, name: "slow", path: "/delay/5000")) }
                #expect(await eventually { server.counters.inFlight == 1 })
                task.cancel()
                await #expect(throws: CancellationError.self) { try await task.value }
            }
        }
    }
}

@Suite struct EventTests {
    @Test func startedRetryingNextPageAndFinished() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 25)
            let clock = VirtualClock()
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: clock)
            configuration.retry = RetryPolicy(initialDelay: 1...1)
            try await withCheckedService(configuration: configuration) { service in
                let events = service.events
                let flaky = Notes.flaky("ev", failures: 1)
                _ = try await service.execute(flaky)
                var list = Notes.list(maxResults: 10)
                list.execution.paging = .fetchAll
                _ = try await service.execute(list)
                await service.shutdown()
                var seen: [String] = []
                for await event in events {
                    switch event {
                    case .started(let id, let name): seen.append("started \(name) \(id == flaky.requestID || id == list.requestID)")
                    case .retrying(_, _, let attempt, let delay, _): seen.append("retrying \(attempt) \(delay)")
                    case .nextPage(_, _, let page): seen.append("page \(page)")
                    case .finished(_, let name, let status, _, let error): seen.append("finished \(name) \(status ?? 0) \(error == nil)")
                    case .waitedForCredentials, .credentialsRefreshed, .rateLimitChanged, .circuitChanged: break
                    }
                }
                #expect(seen == ["started notes.flaky true", "retrying 1 1.0 seconds", "finished notes.flaky 200 true",
                                 "started notes.notes.list true", "page 2", "page 3", "finished notes.notes.list 200 true"])
            }
        }
    }
}

@Suite struct HTTPLogTests {
    @Test func exchangesAreLoggedWithSecretsSnipped() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
            configuration.auth.apiKey = "APIKEY-s3kr1t"
            try await withCheckedService(configuration: configuration) { service in
                var note = Note()
                note.title = "logged"
                note.json["refresh_token"] = "REFRESH-s3kr1t"
                var query = Notes.insert(note)
                query.headers["Authorization"] = "Bearer TOKEN-s3kr1t"
                _ = try await service.execute(query)
                _ = try? await service.execute(Notes.get("missing"))
            }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files.contains("index.html"))
        let exchanges = files.filter { $0.hasSuffix(".txt") }
        #expect(exchanges.count == 2)
        #expect(exchanges[0].contains("POST-notes.notes.insert"))
        let text = try exchanges.map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }.joined()
        #expect(text.contains("\"title\": \"logged\""))
        #expect(text.contains("404"))
        #expect(text.contains("Bearer _snip_"))
        #expect(text.contains("key=_snip_"))
        #expect(!text.contains("s3kr1t"), "a secret reached the log")
        let index = try String(contentsOf: directory.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains(exchanges[1]))
    }

    /// A log on a full disk loses lines, never the process: the index is a link to /dev/full, whose
    /// every write fails with ENOSPC (what crashed a CI run through `FileHandle.write(_:)`).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aFullDiskLosesLogLinesNotTheProcess() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("index.html").path,
                                                   withDestinationPath: "/dev/full")
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
            try await withCheckedService(configuration: configuration) { service in
                let first = try await service.execute(Notes.list(maxResults: 2))
                let second = try await service.execute(Notes.list(maxResults: 2))
                #expect(first.items.count == second.items.count)
            }
        }
        let exchanges = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".txt") }
        #expect(exchanges.count == 2, "the exchanges themselves are still logged")
    }
}

@Suite struct MockTransportTests {
    @Test func mockServiceWithAFakedObject() async throws {
        var note = Note()
        note.title = "Faked"
        let service = try ServiceActor.mock(answering: note)
        let faked = try await service.execute(Notes.get("anything"))
        #expect(faked.title == "Faked")
        await service.shutdown()

        let failing = try ServiceActor.mock(answering: Optional<Note>.none, error: TransportError.timedOut)
        var query = Notes.get("x")
        query.execution.retry = .disabled
        await #expect(throws: TransportError.timedOut) { try await failing.execute(query) }
        await failing.shutdown()
    }

    @Test func thePipelineRunsAgainstCannedResponses() async throws {
        let mock = MockTransport()
        mock.on(.get, path: "/notes/v1/notes") { request in
            let token = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "pageToken" }?.value
            switch token {
            case nil: return try .json(["items": [["id": "1"], ["id": "2"]], "nextPageToken": "p2"])
            default: return try .json(["items": [["id": "3"]]])
            }
        }
        let clock = VirtualClock()
        var configuration = ServiceActor.Configuration.suite()
        configuration.testing.handler = mock.handler
        configuration.testing.clock = clock
        configuration.auth.apiKey = "k-s3kr1t"
        try await withCheckedService(configuration: configuration) { service in
            var query = Notes.list(maxResults: 2)
            query.execution.paging = .fetchAll
            let list = try await service.execute(query)
            #expect(list.items.compactMap(\.id) == ["1", "2", "3"])
            #expect(mock.requests.count == 2)
            let first = try #require(mock.requests.first)
            #expect(first.url.absoluteString == "https://notes.example.com/notes/v1/notes?maxResults=2&prettyPrint=false&key=k-s3kr1t")
            #expect(first.headers["Accept"] == "application/json")
            #expect(await service.stats.completedTransfers == 0) // no network at all
        }
    }

    @Test func perQueryTestHandlerAndRetriesOnAVirtualClock() async throws {
        let mock = MockTransport()
        mock.on(path: "/notes/v1/notes/n1", sequence: [try .googleError(status: 503, message: "busy"),
                                                       try .googleError(status: 503, message: "busy"), try .json(["id": "n1"])])
        let clock = VirtualClock()
        var configuration = ServiceActor.Configuration.suite()
        configuration.testing.clock = clock
        configuration.retry = RetryPolicy(initialDelay: 1...1)
        try await withCheckedService(configuration: configuration) { service in
            var query = Notes.get("n1")
            query.execution.testHandler = mock.handler
            let note = try await service.execute(query)
            #expect(note.id == "n1")
            #expect(clock.sleeps == [.seconds(1), .seconds(2)])
        }
    }

    @Test func unroutedRequestsGetAGoogle404() async throws {
        var configuration = ServiceActor.Configuration.suite()
        configuration.testing.handler = MockTransport().handler
        try await withCheckedService(configuration: configuration) { service in
            do { _ = try await service.execute(Notes.get("x")) } catch APIError.notFound {} catch { Issue.record("\(error)") }
        }
    }
}

@Suite struct RequestRegistryTests {
    /// Cancelling an ID cancels the child task that runs the operation, not the caller's task.
    @Test(.timeLimit(.minutes(5)))
    func cancellingAnIDCancelsItsOperationOnly() async throws {
        let registry = RequestRegistry()
        let sleeping = Task {
            try await registry.run("long") { try await Task.sleep(for: .seconds(3600)) }
        }
        #expect(await eventually { registry.isRunning("long") })
        #expect(registry.cancel("long") == 1)
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(!sleeping.isCancelled) // the caller's task was not cancelled
        #expect(!registry.isRunning("long"))
        #expect(registry.cancel("long") == 0) // finished: ignored
    }

    /// Thousands of short operations leave nothing registered.
    @Test(.timeLimit(.minutes(5)))
    func finishedOperationsLeaveNoEntry() async throws {
        let registry = RequestRegistry()
        for index in 0..<2_000 {
            let value = try await registry.run("op-\(index)") { index }
            #expect(value == index)
        }
        #expect(!registry.isRunning("op-0"))
        #expect(!registry.isRunning("op-1999"))
    }
}
