@testable import Courier
import CourierOpenAPI
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import InMemoryTracing
import MetricsTestKit
import OpenAPINotes
import OpenAPIRuntime
import Synchronization
import CourierTestSupport
import Testing
import Tracing

/// Every operation keeps every promise: rows are the operations, columns the promises of the one
/// request pipeline. Each cell runs the operation for real against CourierTestServer (its fault
/// routes, its raw fault listener) or, in the mock column, against a test handler with the
/// server watching for sockets. Where a promise takes another form for an operation (a GET is
/// idempotent, so it *is* re-sent after a reset), the cell says so and asserts that form.
@Suite struct PipelineConformanceTests {
    enum Operation: String, CaseIterable, Sendable {
        case execute, fetchAll, send, sendAll, sendAllOneAtATime, stream, taskGroupBatch, wireBatch, download, downloadFile, slicedDownload
        case mediaUpload, multipartUpload, resumableUpload, streamUpload
        /// A swift-openapi-generator client's operation over ``CourierTransport``.
        case openAPI

        /// The `operation` dimension its requests are counted under.
        var metricsName: String {
            switch self {
            case .execute, .fetchAll, .taskGroupBatch: "execute"
            case .send, .sendAll, .sendAllOneAtATime: "send"
            case .stream, .openAPI: "stream"
            case .wireBatch: "batch"
            case .download, .downloadFile, .slicedDownload: "download"
            case .mediaUpload, .multipartUpload, .resumableUpload, .streamUpload: "upload"
            }
        }

        /// Whether its requests are a query's, which carry the invocation headers of an API that
        /// sends them; raw requests and a wire batch's envelope carry none.
        var isQuery: Bool {
            switch self {
            case .send, .sendAll, .sendAllOneAtATime, .stream, .download, .openAPI, .wireBatch: false
            default: true
            }
        }

        /// Whether the request carrying a write (`write: true`) is idempotent: a GET-only
        /// operation is; a resumable upload's initiation is by declaration (it opens a session).
        var writeIsIdempotent: Bool {
            switch self {
            case .fetchAll, .stream, .download, .downloadFile, .slicedDownload, .resumableUpload, .streamUpload: true
            default: false
            }
        }
    }

    static let fileBytes = Data(TestPattern.bytes(count: 300_000))
    static let quickRetry = RetryPolicy(maxRetries: 2, initialDelay: 0.01...0.02, deadline: .seconds(60))

    // MARK: Running one operation

    /// Runs `operation` under `requestID`; `write` makes it send a write where it can (an insert,
    /// a POST), and leaves single-request uploads without the precondition (`ifGenerationMatch=0`)
    /// that otherwise makes them idempotent; `root` is where raw requests go. Throws what the
    /// operation threw.
    static func perform(_ operation: Operation, service: ServiceActor, server: TestServer, fileID: String, requestID: String,
                        write: Bool = false, root: URL? = nil, mocked: Bool = false, deduplicated: Bool = false) async throws {
        let root = root ?? server.baseURL
        let options = RequestOptions(requestID: requestID, retry: quickRetry, authorize: true)
        func named<R>(_ query: Query<R>) -> Query<R> {
            var query = query
            query.requestID = requestID
            return query
        }
        var note = write ? Notes.insert(Note(json: ["title": "written"])) : Notes.get("note-0001")
        if deduplicated { note.deduplicationParameter = "requestId" }
        switch operation {
        case .execute:
            let result = try await service.execute(named(note))
            #expect(result.id != nil)
        case .fetchAll:
            var list = named(Notes.list(maxResults: 2))
            list.execution.paging = .fetchAll
            let result = try await service.execute(list)
            #expect(result.items.count == (mocked ? 1 : 3))
        case .send, .sendAll, .sendAllOneAtATime:
            var request = HTTPRequest(url: root.appendingPathComponent("notes/v1/notes/note-0001"))
            if write {
                request = HTTPRequest(method: .post, url: root.appendingPathComponent("notes/v1/notes"),
                                      headers: ["Content-Type": "application/json"], body: .data(Data(#"{"title":"raw"}"#.utf8)))
            }
            if operation == .send {
                let response = try await service.send(request, options: options)
                guard response.isSuccess else { throw APIError(response: response) }
                return
            }
            // sendAll: a worker sends it and the result reaches this task through the inbox;
            // one at a time, this task sends it itself.
            var results = 0
            for await (index, result) in service.sendAll([(request, options)], maxInFlight: operation == .sendAll ? 4 : 1) {
                #expect(index == 0)
                results += 1
                let response = try result.get()
                guard response.isSuccess else { throw APIError(response: response) }
            }
            #expect(results == 1)
        case .stream:
            let response = try await service.stream(HTTPRequest(url: root.appendingPathComponent("notes/v1/notes/note-0001")),
                                                    options: options)
            guard response.head.isSuccess else { throw APIError(response: HTTPResponse(head: response.head)) }
            let body = try await response.body.collect(upTo: 1 << 20)
            #expect(String(decoding: body, as: UTF8.self).contains("note-0001"))
        case .openAPI:
            let configuration = CourierTransport.Configuration(retry: quickRetry, authorize: true)
            let client = OpenAPINotes.Client(serverURL: root, transport: CourierTransport(service: service, configuration: configuration))
            try await CourierTransport.withRequestID(requestID) {
                do {
                    if write {
                        _ = try await client.insertNote(body: .json(.init(title: "written"))).ok
                    } else {
                        let note = try await client.getNote(path: .init(id: "note-0001")).ok.body.json
                        #expect(note.id == "note-0001")
                    }
                } catch let error as ClientError {
                    throw error.underlyingError // the generated client wraps what the transport threw
                }
            }
        case .taskGroupBatch, .wireBatch:
            var batch = write ? QueryBatch(note) : QueryBatch(Notes.get("note-0001"), Notes.get("note-0002"))
            batch.requestID = requestID
            let results = operation == .wireBatch ? try await service.executeBatch(batch) : try await service.batch(batch)
            if let failure = results.failures.values.first { throw failure }
            #expect(results.successes.count == batch.count)
        case .download, .downloadFile, .slicedDownload:
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-conformance-\(UUID())")
            defer {
                try? FileManager.default.removeItem(at: target)
                PartialDownload.remove(for: target)
            }
            if operation == .download {
                let response = try await service.send(HTTPRequest(url: root.appendingPathComponent("download/files/v1/files/\(fileID)")),
                                                      writingBodyTo: target, options: options)
                guard response.isSuccess else { throw APIError(response: response) }
            } else if operation == .slicedDownload {
                // Three concurrent Range slices of the 300,000 bytes.
                let slicing = SlicedDownloads(threshold: 1, maximumSlices: 3, minimumSliceSize: 64 << 10)
                let result = try await service.downloadFile(named(Files.media(server, id: fileID)), to: target,
                                                            options: DownloadOptions(slicing: slicing))
                #expect(result.slices == 3)
            } else {
                _ = try await service.downloadFile(named(Files.media(server, id: fileID)), to: target)
            }
            #expect(try Data(contentsOf: target) == fileBytes)
        case .mediaUpload, .multipartUpload, .resumableUpload, .streamUpload:
            let uploadProtocol: UploadParameters.UploadProtocol = switch operation {
            case .mediaUpload: .media
            case .multipartUpload: .multipart
            default: .resumable
            }
            var parameters = UploadParameters(data: fileBytes, mimeType: "application/octet-stream", uploadProtocol: uploadProtocol)
            if operation == .streamUpload {
                // The same bytes as a stream of unknown length, in pieces.
                let pieces = AsyncStream<Data> { continuation in
                    for start in stride(from: 0, to: fileBytes.count, by: 50_000) {
                        continuation.yield(fileBytes[start..<min(start + 50_000, fileBytes.count)])
                    }
                    continuation.finish()
                }
                parameters = UploadParameters(stream: UploadStream(pieces), mimeType: "application/octet-stream")
            }
            parameters.chunkSize = 256 << 10
            var insert = named(Files.insert(server, name: "conformance-\(UUID())", upload: parameters))
            if !write { insert.parameters.set("ifGenerationMatch", "0") } // "only if new": safe to repeat
            if deduplicated { insert.deduplicationParameter = "requestId" }
            let stored = try await service.execute(insert)
            #expect(stored.json["id"]?.stringValue != nil)
        }
    }

    /// Seeds three notes and the 300,000-byte file; returns the file's ID.
    static func prepare(_ server: TestServer) async throws -> String {
        server.notes.seed(count: 3)
        var clean = ServiceActor.Configuration.testing(server.baseURL)
        clean.retry = .disabled
        return try await withCheckedService(configuration: clean) { service in
            let parameters = UploadParameters(data: fileBytes, mimeType: "application/octet-stream", uploadProtocol: .media)
            let stored = try await service.execute(Files.insert(server, name: "conformance", upload: parameters))
            return try #require(stored.json["id"]?.stringValue)
        }
    }

    /// A fresh server, seeded, and a service for it made by `configure`.
    static func withCell<T>(_ configure: (inout ServiceActor.Configuration, TestServer) -> Void,
                            _ body: (TestServer, ServiceActor, String) async throws -> T) async throws -> T {
        try await withTestServer { server in
            let fileID = try await prepare(server)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.retry = quickRetry
            configure(&configuration, server)
            return try await withCheckedService(configuration: configuration) { service in
                let result = try await body(server, service, fileID)
                await expectNoLeaks(service)
                return result
            }
        }
    }

    // MARK: The promises

    @Test(arguments: Operation.allCases)
    func mockInterceptsAndNoSocketIsOpened(_ operation: Operation) async throws {
        try await withTestServer { server in
            let connectionsBefore = server.counters.connectionsOpened
            let mock = Self.mockAPI()
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.testing.handler = mock.handler
            configuration.auth.authorizer = BearerTokenAuthorizer(token: "mock-s3kr1t-token")
            try await withCheckedService(configuration: configuration) { service in
                try await Self.perform(operation, service: service, server: server, fileID: "f1", requestID: "mock-\(operation)",
                                       mocked: true)
                #expect(await service.stats.easyHandles == 0, "a transfer was made")
            }
            #expect(!mock.requests.isEmpty, "the mock saw nothing")
            #expect(server.counters.requests == 0)
            #expect(server.counters.connectionsOpened == connectionsBefore, "a connection reached the server")
        }
    }

    @Test(arguments: Operation.allCases)
    func theLimiterBoundHolds(_ operation: Operation) async throws {
        let injector = FaultInjector("slow-100")
        try await Self.withCell({ configuration, _ in
            configuration.limits.maxConcurrentQueries = 1
            configuration.auth.authorizer = injector
        }) { server, service, fileID in
            server.counters.resetMaxInFlight()
            let before = server.counters.requests
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<3 {
                    group.addTask {
                        try await Self.perform(operation, service: service, server: server, fileID: fileID,
                                               requestID: "limit-\(operation)-\(index)")
                    }
                }
                try await group.waitForAll()
            }
            #expect(server.counters.requests - before >= 3)
            #expect(server.counters.maxInFlight <= 1, "\(operation): \(server.counters.maxInFlight) requests at once")
        }
    }

    /// Cloud Storage's invocation headers, turned on here for the test APIs: every request a
    /// query's operation makes carries a token and `x-goog-api-client` with the same ID and its
    /// attempt's number, as the server received them, and so does every part of a wire batch;
    /// raw requests and a batch's envelope carry none.
    @Test(arguments: Operation.allCases)
    func everyQueryRequestCarriesItsInvocation(_ operation: Operation) async throws {
        try await Self.withCell({ configuration, _ in
            configuration.queries.invocationHeaderAPIs = [TestAPIs.notes.name, "files"]
        }) { server, service, fileID in
            let (requests, carried) = (server.counters.requests, server.counters.invocationCount)
            let parts = server.counters.batchParts.count
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "invocation-\(operation)")
            let sent = server.counters.requests - requests
            let stamped = server.counters.invocationCount - carried
            let partsSent = server.counters.batchParts.dropFirst(parts)
            #expect(sent > 0)
            #expect(partsSent.isEmpty == (operation != .wireBatch), "\(operation): \(partsSent.count) batch parts")
            for part in partsSent {
                let token = try #require(part.token, "\(operation): a batch part without a token")
                #expect(part.client?.hasPrefix("gccl-invocation-id/\(token) gccl-attempt-count/") == true, "\(part)")
            }
            guard operation.isQuery else {
                #expect(stamped == 0, "\(operation): a raw request or a batch's envelope carried invocation headers")
                return
            }
            #expect(stamped == sent, "\(operation): \(stamped) of \(sent) requests carried them")
            for invocation in server.counters.invocations.suffix(stamped) {
                let token = try #require(invocation.token, "\(operation): no token")
                #expect(UUID(uuidString: token) != nil)
                #expect(invocation.client?.hasPrefix("gccl-invocation-id/\(token) gccl-attempt-count/") == true,
                        "\(operation): \(invocation.client ?? "no x-goog-api-client")")
            }
        }
    }

    /// A configured proxy carries every request of every operation: the setting is the
    /// transport's, applied where every transfer's options are set. The test server stands in for
    /// the proxy and counts what came to it as to one (without a proxy, none does).
    @Test(arguments: Operation.allCases)
    func everyRequestGoesThroughTheProxy(_ operation: Operation) async throws {
        try await Self.withCell({ configuration, server in
            configuration.transport.proxy = .url(server.baseURL.absoluteString)
        }) { server, service, fileID in
            let (requests, proxied) = (server.counters.requests, server.counters.proxiedRequests)
            #expect(proxied == 0, "the seeding service, which has no proxy, sent as to one")
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "proxy-\(operation)")
            #expect(server.counters.requests > requests)
            #expect(server.counters.proxiedRequests - proxied == server.counters.requests - requests, "\(operation)")
        }
    }

    /// The limiter check above is not vacuous: without the limiter the same runs overlap.
    @Test func withoutTheLimiterRequestsOverlap() async throws {
        let injector = FaultInjector("slow-300")
        try await Self.withCell({ configuration, _ in configuration.auth.authorizer = injector }) { server, service, fileID in
            server.counters.resetMaxInFlight()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<3 {
                    group.addTask {
                        try await Self.perform(.execute, service: service, server: server, fileID: fileID, requestID: "free-\(index)")
                    }
                }
                try await group.waitForAll()
            }
            #expect(server.counters.maxInFlight > 1)
        }
    }

    @Test(arguments: Operation.allCases)
    func fourOhOneRefreshesExactlyOnceThenSucceeds(_ operation: Operation) async throws {
        let injector = FaultInjector("401x1")
        try await Self.withCell({ configuration, _ in configuration.auth.authorizer = injector }) { server, service, fileID in
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "auth-\(operation)")
            #expect(injector.invalidations.load(ordering: .relaxed) == 1)
        }
    }

    @Test(arguments: Operation.allCases)
    func fiveOhThreeIsRetried(_ operation: Operation) async throws {
        let injector = FaultInjector("503x2")
        try await Self.withCell({ configuration, _ in configuration.auth.authorizer = injector }) { server, service, fileID in
            let events = service.events
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "busy-\(operation)")
            await service.shutdown()
            var retries = 0
            for await event in events { if case .retrying = event { retries += 1 } }
            #expect(retries == 2, "\(operation) retried \(retries) times")
        }
    }

    /// libcurl's own re-send is told as a retry. The server closes each kept-alive connection as
    /// its next request arrives (``KeptAliveDropHandler``), so every request after a connection's
    /// first reaches it and goes unanswered (all are idempotent here: reads, and uploads "only if
    /// new"). The operation runs twice, so the second run's first request meets a kept-alive
    /// connection too. Every request the server dropped must come back as a `retrying` event:
    /// curl's re-send on a fresh connection, or, when the close broke a body still being sent
    /// (an upload's), the pipeline's own retry after the broken pipe. Before, curl's re-sends
    /// went untold (the reads' cells had no event for any of their drops).
    /// The HTTP log accounts for the same requests: each entry is one attempt, and one that curl
    /// sent again says how many times it went out, so the entries add up to what the server received.
    @Test(arguments: Operation.allCases)
    func curlsOwnResendIsAnnouncedAsARetry(_ operation: Operation) async throws {
        let injector = FaultInjector("drop-kept-alive")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resend-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.withCell({ configuration, _ in
            configuration.auth.authorizer = injector
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
        }) { server, service, fileID in
            let events = service.events
            for run in 0..<2 {
                try await Self.perform(operation, service: service, server: server, fileID: fileID,
                                       requestID: "resend-\(operation)-\(run)")
            }
            await service.shutdown()
            var announced = 0
            for await event in events {
                if case .retrying = event { announced += 1 }
            }
            let dropped = server.faults.requests("dropped:" + injector.header)
            #expect(dropped >= 1, "\(operation): no request met a kept-alive connection closed on it")
            #expect(announced == dropped, "\(operation): \(dropped) requests dropped and re-sent by curl, \(announced) told")
            let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".txt") }
            let logged = try entries.reduce(0) { total, entry in
                let text = try String(contentsOf: directory.appendingPathComponent(entry), encoding: .utf8)
                let sent = text.firstMatch(of: /<sent (\d+) times/).flatMap { Int($0.output.1) }
                return total + (sent ?? 1)
            }
            #expect(logged == server.faults.requests(injector.header),
                    "\(operation): the HTTP log tells of \(logged) requests, the server received \(server.faults.requests(injector.header))")
        }
    }

    @Test(arguments: Operation.allCases)
    func fourTwentyNineWaitsForRetryAfter(_ operation: Operation) async throws {
        let injector = FaultInjector("429x1")
        let clock = VirtualClock()
        try await Self.withCell({ configuration, _ in
            configuration.auth.authorizer = injector
            configuration.testing.clock = clock
        }) { server, service, fileID in
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "quota-\(operation)")
            #expect(clock.sleeps == [.seconds(1)], "\(operation) slept \(clock.sleeps)") // the server's Retry-After: 1
        }
    }

    /// Runs `operation` against a listener that resets every request once it has arrived;
    /// returns the error and how many requests reached the server.
    static func afterResets(_ operation: Operation, write: Bool) async throws -> (error: (any Error)?, reached: Int) {
        let injector = FaultInjector("reset-before-headers")
        return try await withCell({ configuration, server in
            configuration.auth.authorizer = injector
            configuration.queries.rootURL = server.faultURL
        }) { server, service, fileID in
            let error = await #expect(throws: (any Error).self) {
                try await perform(operation, service: service, server: server, fileID: fileID, requestID: "reset-\(operation)",
                                  write: write, root: server.faultURL)
            }
            return (error, server.faults.requests(injector.header))
        }
    }

    /// A reset after the request went out: a write is never sent twice unless idempotent; a
    /// read (GET) is idempotent and is re-sent, 1 + 2 retries.
    @Test(arguments: Operation.allCases)
    func aWriteIsNotResentAfterAResetUnlessIdempotent(_ operation: Operation) async throws {
        let (error, reached) = try await Self.afterResets(operation, write: true)
        if operation.writeIsIdempotent {
            #expect(reached == 3, "\(operation): idempotent, so re-sent: \(reached) requests")
        } else {
            #expect(reached == 1, "\(operation): a write reached the server \(reached) times")
        }
        #expect(error.map(FaultMatrixTests.isTyped) == true, "\(String(describing: error))")
    }

    /// The same reset with a write that carries a request ID its server deduplicates by
    /// (``Query/deduplicationParameter``): every query operation re-sends it, 1 + 2 retries, each
    /// with the one ID Courier set (a wire batch carries it inside its part).
    @Test(arguments: [Operation.execute, .taskGroupBatch, .wireBatch, .mediaUpload, .multipartUpload])
    func aWriteWithARequestIDIsResentWithTheSameID(_ operation: Operation) async throws {
        let injector = FaultInjector("reset-before-headers")
        try await Self.withCell({ configuration, server in
            configuration.auth.authorizer = injector
            configuration.queries.rootURL = server.faultURL
        }) { server, service, fileID in
            let error = await #expect(throws: (any Error).self) {
                try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "dedup-\(operation)",
                                       write: true, root: server.faultURL, deduplicated: true)
            }
            #expect(error.map(FaultMatrixTests.isTyped) == true, "\(String(describing: error))")
            let targets = server.faults.targets(injector.header)
            #expect(targets.count == 3, "\(operation): \(targets)")
            guard operation != .wireBatch else { return }
            let ids = targets.map { URLComponents(string: $0)?.queryItems?.first { $0.name == "requestId" }?.value }
            #expect(ids.count == 3 && ids[0].flatMap(UUID.init(uuidString:)) != nil && Set(ids).count == 1, "\(operation): \(ids)")
        }
    }

    /// The same reset with a precondition (`ifGenerationMatch=0`): the write cannot apply twice,
    /// so it is re-sent.
    @Test(arguments: [Operation.mediaUpload, .multipartUpload])
    func aWriteWithAPreconditionIsResentAfterAReset(_ operation: Operation) async throws {
        let (error, reached) = try await Self.afterResets(operation, write: false)
        #expect(reached == 3)
        #expect(error is TransportError)
    }

    /// Credentials renew in the background: with the token inside its refresh margin, the
    /// operation's requests never wait for it; one background refresh runs, started (and told,
    /// through the events) under the operation's request ID.
    @Test(arguments: Operation.allCases)
    func credentialsRenewWithoutWaiting(_ operation: Operation) async throws {
        let clock = MovableNow()
        let authorizer = LockedValue<OAuth2RefreshTokenAuthorizer?>(nil)
        try await Self.withCell({ configuration, server in
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken)
            let made = try? OAuth2RefreshTokenAuthorizer(
                clientID: AuthFixtures.clientID, clientSecret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken,
                scopes: ["notes.read"], tokenURL: server.url("/token"), now: clock.now)
            authorizer.withLock { $0 = made }
            configuration.auth.authorizer = made
        }) { server, service, fileID in
            _ = try await #require(authorizer.withLock { $0 }).currentToken(through: service) // the first token
            clock.advance(by: 3600 - 120) // two minutes left: stale
            let requestID = "renew-\(operation)"
            let waits = LockedValue(0)
            let refreshes = LockedValue<[(id: String, background: Bool)]>([])
            let events = service.events
            let counting = Task {
                for await event in events {
                    switch event {
                    case .waitedForCredentials: waits.withLock { $0 += 1 }
                    case .credentialsRefreshed(let id, _, let background, _, _): refreshes.withLock { $0.append((id, background)) }
                    default: break
                    }
                }
            }
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: requestID)
            #expect(await eventually { refreshes.withLock { $0.contains { $0.background } } })
            await service.shutdown()
            await counting.value
            let (waited, done) = (waits.withLock { $0 }, refreshes.withLock { $0 })
            #expect(waited == 0, "\(operation): \(waited) requests waited for credentials")
            // Each item of a task-group batch is an operation of its own, with its query's ID.
            let started = done.first.map { operation == .taskGroupBatch ? !$0.id.isEmpty : $0.id.hasPrefix(requestID) } ?? false
            #expect(done.count == 1 && done[0].background && started, "\(operation): \(done)")
            #expect(server.tokens.refreshCount == 2)
        }
    }

    @Test(arguments: Operation.allCases)
    func theLogHoldsNoSecret(_ operation: Operation) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-conformance-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = "ya29.s3kr1t-conformance-\(operation)"
        SuiteLog.registerSecret(secret)
        try await Self.withCell({ configuration, _ in
            configuration.auth.apiKey = "AIza-s3kr1t-conformance-key"
            configuration.auth.authorizer = BearerTokenAuthorizer(token: secret)
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
        }) { server, service, fileID in
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "log-\(operation)")
            await service.shutdown()
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".txt") }
            #expect(!files.isEmpty, "nothing was logged")
            var snipped = false
            for file in files {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                #expect(!text.contains("s3kr1t"), "\(file) holds a secret:\n\(text)")
                snipped = snipped || text.contains(Redaction.placeholder)
            }
            #expect(snipped, "no credential was snipped: the check saw none to hide")
        }
    }

    @Test(arguments: Operation.allCases)
    func eventsTellStartAndEnd(_ operation: Operation) async throws {
        try await Self.withCell({ _, _ in }) { server, service, fileID in
            let events = service.events
            let id = "events-\(operation)"
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: id)
            await service.shutdown()
            var started = false
            var finished = false
            for await event in events where event.requestID == id {
                switch event {
                case .started: started = true
                case .finished(_, _, let status, _, let error):
                    #expect(error == nil)
                    // A task-group batch sends no request of its own: its queries' events carry the statuses.
                    #expect(status.map { (200..<300).contains($0) } ?? (operation == .taskGroupBatch), "status \(String(describing: status))")
                    finished = true
                default: break
                }
            }
            #expect(started)
            #expect(finished)
        }
    }

    @Test(arguments: Operation.allCases)
    func metricsAreRecorded(_ operation: Operation) async throws {
        let metrics = TestMetrics()
        let injector = FaultInjector("503x1")
        try await Self.withCell({ configuration, _ in
            configuration.telemetry.metricsFactory = metrics
            configuration.auth.authorizer = injector
        }) { server, service, fileID in
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "metrics-\(operation)")
            let name = operation.metricsName
            #expect(metrics.counterTotal(label: "courier_requests_total", dimensions: [("operation", name), ("status", "2xx")]) >= 1)
            #expect(metrics.counterTotal(label: "courier_requests_total", dimensions: [("operation", name), ("status", "5xx")]) == 1)
            #expect(metrics.counterTotal(label: "courier_retries_total", dimensions: [("operation", name), ("status", "5xx")]) == 1)
            #expect(!metrics.timers(label: "courier_request_duration_seconds").isEmpty)
            let operations = metrics.counters(label: "courier_operations_total").reduce(0) { $0 + $1.totalValue }
            #expect(operations >= 1)
        }
    }

    /// Every request of every operation takes a rate-limit token: at 2 per second with no burst,
    /// on a virtual clock, the run's requests are spaced half a second apart.
    @Test(arguments: Operation.allCases)
    func rateLimitsPaceEveryRequest(_ operation: Operation) async throws {
        let clock = VirtualClock()
        try await Self.withCell({ configuration, _ in
            configuration.testing.clock = clock
            configuration.limits.rateLimits = RateLimits(.perSecond(2, burst: 1, adaptive: false), scope: .service)
        }) { server, service, fileID in
            let before = server.counters.requests
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<2 {
                    group.addTask {
                        try await Self.perform(operation, service: service, server: server, fileID: fileID,
                                               requestID: "rate-\(operation)-\(index)")
                    }
                }
                try await group.waitForAll()
            }
            let requests = server.counters.requests - before
            #expect(requests >= 2)
            let paced = Duration.milliseconds(500 * (requests - 1))
            #expect(clock.elapsed >= paced, "\(operation): \(requests) requests in \(clock.elapsed)")
            #expect(service.rateLimitStatus().map(\.key) == ["service"])
        }
    }

    /// An open circuit fails every operation fast: after a 503 opens it (threshold 1), the
    /// next run throws ``CircuitOpenError`` and nothing reaches the server.
    @Test(arguments: Operation.allCases)
    func anOpenCircuitFailsEveryOperationFast(_ operation: Operation) async throws {
        let injector = FaultInjector("503x1")
        try await Self.withCell({ configuration, _ in
            configuration.auth.authorizer = injector
            configuration.limits.circuitBreaker = CircuitBreakerPolicy(failureThreshold: 1, openDuration: .seconds(600),
                                                                guardsRawRequests: true)
        }) { server, service, fileID in
            await #expect(throws: (any Error).self) {
                try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "open-\(operation)")
            }
            let reached = server.counters.requests
            let error = await #expect(throws: (any Error).self) {
                try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "fast-\(operation)")
            }
            #expect(error.map(Self.isCircuitOpen) == true, "\(operation): \(String(describing: error))")
            #expect(server.counters.requests == reached, "\(operation) reached the server through an open circuit")
        }
    }

    static func isCircuitOpen(_ error: any Error) -> Bool { error is CircuitOpenError }

    /// No operation sends credentials to another universe: the service works in one, its
    /// authorizer belongs to Google Cloud's, so every operation fails before its first request
    /// leaves (the server sees nothing); with the authorizer in the service's universe, it works.
    @Test(arguments: Operation.allCases)
    func noOperationSendsCredentialsToAnotherUniverse(_ operation: Operation) async throws {
        let bearer = BearerTokenAuthorizer(token: "conformance-token")
        try await Self.withCell({ configuration, _ in
            configuration.auth.authorizer = bearer
            configuration.universeDomain = "sovereign.example"
        }) { server, service, fileID in
            let reached = server.counters.requests
            let error = await #expect(throws: (any Error).self) {
                try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "universe-\(operation)")
            }
            #expect(error.map { ($0 as? AuthError) == .universeMismatch || "\($0)".contains("AuthError.universeMismatch") } == true,
                    "\(operation): \(String(describing: error))")
            #expect(server.counters.requests == reached, "\(operation) reached the server with another universe's credentials")
        }
        try await Self.withCell({ configuration, _ in
            configuration.auth.authorizer = InUniverse(inner: bearer, universe: "sovereign.example")
            configuration.universeDomain = "Sovereign.Example"
        }) { server, service, fileID in
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: "same-\(operation)")
        }
    }

    /// An authorizer of another universe than Google Cloud's.
    struct InUniverse: Authorizer {
        let inner: any Authorizer
        let universe: String
        func authorize(_ request: inout HTTPRequest) async throws { try await inner.authorize(&request) }
        func universeDomain(context: AuthorizationContext?) async throws -> String { universe }
    }

    /// Every operation is traced: a span under its request ID, and a client span per attempt in
    /// its trace, each a descendant of it.
    @Test(arguments: Operation.allCases)
    func everyOperationIsTraced(_ operation: Operation) async throws {
        let tracer = InMemoryTracer()
        try await Self.withCell({ configuration, _ in configuration.telemetry.tracer = tracer }) { server, service, fileID in
            let id = "traced-\(operation)"
            try await Self.perform(operation, service: service, server: server, fileID: fileID, requestID: id)
            let spans = tracer.finishedSpans
            let roots = spans.filter { span in
                guard span.kind == .internal, case .string(let value)? = span.attributes["courier.request_id"]?.toSpanAttribute()
                else { return false }
                return value == id
            }
            let root = try #require(roots.first, "\(operation): no operation span")
            let attempts = spans.filter { $0.kind == .client }
            #expect(!attempts.isEmpty, "\(operation): no attempt span")
            let byID = Dictionary(spans.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
            for attempt in attempts {
                var ancestor = attempt.parentSpanID.flatMap { byID[$0] }
                while let current = ancestor, current.spanID != root.spanID { ancestor = current.parentSpanID.flatMap { byID[$0] } }
                #expect(ancestor != nil, "\(operation): attempt \(attempt.operationName) is not under the operation's span")
            }
        }
    }

    /// Runs the operation against a listener that stalls after the status line, stops it with
    /// `stop` once the request has reached the server, and expects `CancellationError` soon.
    static func expectStopped(_ operation: Operation, stop: @escaping @Sendable (ServiceActor, Task<Void, any Error>, String) async -> Void)
        async throws
    {
        let injector = FaultInjector("stall-headers")
        try await withCell({ configuration, server in
            configuration.auth.authorizer = injector
            configuration.queries.rootURL = server.faultURL
            configuration.transport.timeouts = Timeouts(connect: .seconds(10), idle: .seconds(120))
        }) { server, service, fileID in
            let id = "stop-\(operation)-\(UUID())"
            let started = ContinuousClock.now
            let task = Task {
                try await perform(operation, service: service, server: server, fileID: fileID, requestID: id, root: server.faultURL)
            }
            #expect(await eventually { server.faults.requests(injector.header) > 0 }, "the request never arrived")
            await stop(service, task, id)
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(ContinuousClock.now - started < .seconds(60))
        }
    }

    @Test(arguments: Operation.allCases)
    func cancelByRequestIDEndsIt(_ operation: Operation) async throws {
        try await Self.expectStopped(operation) { service, _, id in await service.cancel(requestID: id) }
    }

    @Test(arguments: Operation.allCases)
    func taskCancellationEndsIt(_ operation: Operation) async throws {
        try await Self.expectStopped(operation) { _, task, _ in task.cancel() }
    }

    // MARK: A mock of the test APIs

    /// Answers every request the matrix's operations make, without a socket.
    static func mockAPI() -> MockTransport {
        let mock = MockTransport()
        let note: JSONValue = ["id": "note-0001", "title": "mocked"]
        mock.on(.get, path: "/notes/v1/notes/note-0001") { _ in try .json(note) }
        mock.on(.get, path: "/notes/v1/notes/note-0002") { _ in try .json(["id": "note-0002"]) }
        mock.on(.get, path: "/notes/v1/notes") { _ in try .json(["items": [note]]) }
        mock.on(.post, path: "/notes/v1/notes") { _ in try .json(note) }
        mock.on(.get, path: "/download/files/v1/files/f1") { request in
            var headers: HTTPHeaders = ["Content-Type": "application/octet-stream", "Accept-Ranges": "bytes", "ETag": "\"m1\""]
            // `bytes=a-b`, as the sliced download asks.
            let bounds = (request.headers["Range"] ?? "").dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
            guard bounds.count == 2 else {
                headers["Content-Length"] = String(fileBytes.count)
                return HTTPResponse(status: 200, headers: headers, body: fileBytes, url: request.url)
            }
            headers["Content-Range"] = "bytes \(bounds[0])-\(bounds[1])/\(fileBytes.count)"
            return HTTPResponse(status: 206, headers: headers, body: fileBytes[bounds[0]...bounds[1]], url: request.url)
        }
        mock.on(.post, path: "/upload/files/v1/files") { request in
            if request.url.query?.contains("uploadType=resumable") == true {
                return HTTPResponse(status: 200, headers: ["Location": "http://mock.invalid/session?upload_id=s3kr1t-mock"],
                                    url: request.url)
            }
            return try .json(["id": "f1"])
        }
        mock.on(.put, path: "/session") { request in
            // 308 until the chunk that ends the file, as a resumable session answers.
            let range = request.headers["Content-Range"] ?? ""
            let numbers = range.dropFirst("bytes ".count).split(whereSeparator: { $0 == "-" || $0 == "/" }).compactMap { Int($0) }
            if range.hasSuffix("/*") || (numbers.count == 3 && numbers[1] + 1 < numbers[2]) {
                return HTTPResponse(status: 308, headers: ["Range": "bytes=0-\(numbers[1])"], url: request.url)
            }
            return try .json(["id": "f1"])
        }
        mock.on(.post, path: "/batch/notes/v1") { request in try batchAnswer(to: request) }
        return mock
    }

    /// A `multipart/mixed` batch response answering each part of `request` with a note.
    static func batchAnswer(to request: HTTPRequest) throws -> HTTPResponse {
        guard case .data(let body) = request.body.storage else { throw QueryError(code: .invalidQuery, message: "no batch body") }
        let boundary = try MultipartParser.boundary(fromContentType: request.headers["Content-Type"] ?? "")
        let parts = try MultipartParser.parse(body, boundary: boundary).parts
        var text = ""
        for part in parts {
            let id = part.header("Content-ID") ?? ""
            let answer = #"{"id":"note-0001"}"#
            text += "--reply\r\nContent-Type: application/http\r\nContent-ID: <response-\(id.dropFirst().dropLast())>\r\n\r\n"
            text += "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(answer.utf8.count)\r\n\r\n\(answer)\r\n"
        }
        text += "--reply--\r\n"
        return HTTPResponse(status: 200, headers: ["Content-Type": "multipart/mixed; boundary=reply"], body: Data(text.utf8),
                            url: request.url)
    }
}
