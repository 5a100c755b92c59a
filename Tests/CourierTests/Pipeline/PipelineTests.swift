@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import FoundationNetworking
import Synchronization
import CourierTestSupport
import Testing

/// The pipeline's rules one at a time, where the conformance matrix has no column for them.
@Suite struct PipelineTests {
    /// libcurl re-sends a request on a fresh connection when a kept-alive one dies before any
    /// answer ("Connection died, retrying a fresh connect"). The server may already have acted on
    /// it, so for a POST the prerequest callback refuses: one request reaches the server, and the
    /// caller gets a typed error saying it may have arrived.
    @Test func curlsSilentResendOfAPOSTIsRefused() async throws {
        try await withServerAndService { server, service in
            let fault = "keepalive-then-drop;run=\(UUID())"
            var post = HTTPRequest(method: .post, url: server.faultURL("/orders"), headers: ["X-Courier-Fault": fault],
                                   body: .data(Data(#"{"item":1}"#.utf8)))
            post.headers["Content-Type"] = "application/json"
            let first = try await service.send(post)
            #expect(first.status == 200) // the connection stays alive for the next request
            let error = await #expect(throws: TransportError.self) { try await service.send(post) }
            #expect(error == .connectionLost)
            #expect(error?.requestMayHaveBeenSent == true)
            #expect(server.faults.requests(fault) == 2, "the second POST reached the server more than once")
        }
    }

    /// The same race for a GET: repeating it is harmless, so curl's re-send stands and succeeds,
    /// and is told as the retry it is (event, metric, the operation's retry count, the HTTP log):
    /// the server saw the request twice, and a caller counting retries must not find one missing.
    @Test func curlsSilentResendOfAGETStandsAndIsAnnounced() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resend-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServerAndService(configure: { $0.telemetry.httpLog = HTTPLogOptions(directory: directory) }) { server, service in
            let events = service.events
            let fault = "keepalive-then-drop;run=\(UUID())"
            let get = HTTPRequest(url: server.faultURL("/orders/1"), headers: ["X-Courier-Fault": fault])
            let value1 = try await service.send(get, options: RequestOptions(requestID: "first"))
            #expect(value1.status == 200)
            let value2 = try await service.send(get, options: RequestOptions(requestID: "second"))
            #expect(value2.status == 200) // re-sent on a fresh connection by curl
            #expect(server.faults.requests(fault) == 3)
            await service.shutdown()
            var retries: [(String, Int, Duration, String)] = []
            for await event in events {
                if case .retrying(let id, _, let attempt, let delay, let reason) = event { retries.append((id, attempt, delay, reason)) }
            }
            #expect(retries.count == 1, "\(retries)")
            #expect(retries.first?.0 == "second")
            #expect(retries.first?.1 == 1)
            #expect(retries.first?.2 == .zero)
            #expect(retries.first?.3.contains("libcurl sent the request again on a fresh connection") == true)
        }
        // The HTTP log tells it too: the second exchange was sent twice, the first once.
        let exchanges = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".txt") }.sorted()
        #expect(exchanges.count == 2)
        let texts = try exchanges.map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }
        #expect(texts.first?.contains("<sent") == false)
        #expect(texts.last?.contains("<sent 2 times: a kept-alive connection closed before any response") == true)
        let index = try String(contentsOf: directory.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains("200 (sent 2 times)"))
    }

    /// Every GET after the first meets a kept-alive connection the server closes on it, as
    /// servers do with idle connections. libcurl counts its re-sends on the easy handle and gives
    /// up after five without ever clearing the count, so a pooled handle kept between plain GETs
    /// failed the sixth with `connectionLost` (curl 55/56). Courier resets a handle that re-sent.
    @Test func closedKeptAliveConnectionsNeverReachTheCaller() async throws {
        try await withServerAndService { server, service in
            let fault = "keepalive-then-drop;run=\(UUID())"
            let get = HTTPRequest(url: server.faultURL("/orders/1"), headers: ["X-Courier-Fault": fault])
            for attempt in 0..<12 {
                let status = try await service.send(get).status
                #expect(status == 200, "GET \(attempt)")
            }
            #expect(server.faults.requests(fault) == 1 + 11 * 2) // each GET after the first: dropped once, then answered
            await expectNoLeaks(service)
        }
    }

    /// A POST declared idempotent keeps curl's re-send too.
    @Test func aDeclaredIdempotentPOSTMayBeResent() async throws {
        try await withServerAndService { server, service in
            let fault = "keepalive-then-drop;run=\(UUID())"
            var post = HTTPRequest(method: .post, url: server.faultURL("/orders"), headers: ["X-Courier-Fault": fault],
                                   body: .data(Data("{}".utf8)))
            post.idempotency = .always
            let value3 = try await service.send(post).status
            #expect(value3 == 200)
            let value4 = try await service.send(post).status
            #expect(value4 == 200)
            #expect(server.faults.requests(fault) == 3)
        }
    }

    /// A refused connect sent nothing: even a POST is retried.
    @Test func aRefusedConnectIsRetriedForEveryMethod() async throws {
        let clock = VirtualClock()
        var configuration = ServiceActor.Configuration.suite()
        configuration.testing.clock = clock
        try await withCheckedService(configuration: configuration) { service in
            let post = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1:\(unusedPort())/orders")!, body: .data(Data("{}".utf8)))
            let error = await #expect(throws: TransportError.self) {
                try await service.send(post, options: RequestOptions(retry: RetryPolicy(maxRetries: 2, initialDelay: 1...1)))
            }
            #expect(error == .connectionFailed)
            #expect(error?.requestMayHaveBeenSent == false)
            #expect(clock.sleeps == [.seconds(1), .seconds(2)])
        }
    }

    /// Raw `send` returns a non-2xx answer as it is and retries nothing unless asked.
    @Test func rawSendDoesNotRetryByDefault() async throws {
        try await withServerAndService { server, service in
            let fault = "503x1;run=\(UUID())"
            let request = HTTPRequest(url: server.url("/status/200"), headers: ["X-Courier-Fault": fault])
            #expect(try await service.send(request).status == 503)
            let value5 = try await service.send(request).status
            #expect(value5 == 200)
        }
    }

    /// A 403 is final, unless Google's error reason says the rate limit was hit.
    @Test func aRateLimit403IsRetried() async throws {
        let clock = VirtualClock()
        try await withServerAndService(configure: { $0.testing.clock = clock }) { server, service in
            server.notes.seed(count: 1)
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: clock)
            configuration.auth.authorizer = FaultInjector("403x1")
            try await withCheckedService(configuration: configuration) { limited in
                let note = try await limited.execute(Notes.get("note-0001"))
                #expect(note.id == "note-0001")
                #expect(clock.sleeps.count == 1)
            }
            _ = service
        }
    }

    @Test func duplicateRequestIDsInABatchFailBeforeAnythingIsSent() async throws {
        let mock = MockTransport()
        var configuration = ServiceActor.Configuration.suite()
        configuration.testing.handler = mock.handler
        try await withCheckedService(configuration: configuration) { service in
            var twin = Notes.get("a")
            let original = twin
            twin.requestID = original.requestID
            let batch = QueryBatch(original, twin)
            await #expect(throws: BatchError.duplicateRequestID) { try await service.batch(batch) }
            await #expect(throws: BatchError.duplicateRequestID) { try await service.executeBatch(batch) }
            await #expect(throws: BatchError.duplicateRequestID) { for try await _ in service.batchResults(batch) {} }
            #expect(mock.requests.isEmpty)
        }
    }

    /// Parts answered 503 inside a 200 batch go again in a follow-up batch; a write does not.
    @Test func transientPartsOfAWireBatchAreResent() async throws {
        try await withServerAndService { server, _ in
            server.notes.seed(count: 1)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.retry = RetryPolicy(maxRetries: 3, initialDelay: 0.01...0.02)
            try await withCheckedService(configuration: configuration) { service in
                let events = service.events
                let flaky = Notes.flaky("batch-\(UUID())", failures: 2)
                let steady = Notes.get("note-0001")
                let results = try await service.executeBatch(QueryBatch(flaky, steady))
                #expect(try results.value(for: flaky).json["attempts"]?.intValue == 3)
                #expect(try results.value(for: steady).id == "note-0001")
                await service.shutdown()
                var retries = 0
                for await event in events { if case .retrying = event { retries += 1 } }
                #expect(retries == 2) // two follow-up batches, each with only the flaky part
            }
        }
    }

    /// A waiter on a shared token refresh that is cancelled returns at once; the refresh goes on
    /// and serves the others.
    @Test(.timeLimit(.minutes(5)))
    func aCancelledTokenWaiterReturnsPromptly() async throws {
        let gate = AsyncStream<Void>.makeStream()
        let fetches = Atomic<Int>(0)
        let cache = TokenCache(source: "test", refresh: TokenRefresh(refreshBefore: .zero, expireBefore: .zero), now: Date.init) { _ in
            fetches.add(1, ordering: .relaxed)
            for await _ in gate.stream { break }
            return AccessToken(value: "t-s3kr1t", expiresAt: Date().addingTimeInterval(3600), scopes: [])
        }
        let patient = Task { try await cache.token(context: nil) }
        let impatient = Task { try await cache.token(context: nil) }
        #expect(await eventually { fetches.load(ordering: .relaxed) == 1 })
        try await Task.sleep(for: .milliseconds(50))
        impatient.cancel()
        // The refresh stays blocked until the cancelled waiter has returned: a waiter that waited
        // for the refresh would never return, and the time limit would fail the test. (No
        // wall-clock bound: on a loaded pool even a prompt return has taken 5.5 s.)
        await #expect(throws: CancellationError.self) { try await impatient.value }
        gate.continuation.yield()
        #expect(try await patient.value.value == "t-s3kr1t")
        #expect(fetches.load(ordering: .relaxed) == 1)
    }

    /// A token request goes through the service of the query that needs it: no second service,
    /// and the test handler answers it like any other request.
    @Test func tokenRequestsTakeTheCallingServicesPipeline() async throws {
        let mock = MockTransport()
        mock.on(.post, path: "/token") { _ in try .json(["access_token": "ya29.s3kr1t-mocked", "expires_in": 3600]) }
        mock.on(.get, path: "/notes/v1/notes/n1") { request in
            try .json(["id": "n1", "auth": .string(request.headers["Authorization"] ?? "")])
        }
        var configuration = ServiceActor.Configuration.testing(URL(string: "http://notes.invalid")!)
        configuration.testing.handler = mock.handler
        configuration.auth.authorizer = try OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: "s3kr1t-secret", refreshToken: "r-s3kr1t",
                                                                    tokenURL: URL(string: "http://127.0.0.1:9/token")!)
        try await withCheckedService(configuration: configuration) { service in
            let note = try await service.execute(Notes.get("n1"))
            #expect(note.json["auth"] == "Bearer ya29.s3kr1t-mocked")
            #expect(mock.requests.map(\.url.path) == ["/token", "/notes/v1/notes/n1"])
        }
    }

    /// GTLR's `requestForQuery:`: the exact authorized request, sent here with URLSession.
    @Test func aQueryBecomesTheRequestThePipelineWouldSend() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = APIKeyAuthorizer(key: "k-s3kr1t")
            try await withCheckedService(configuration: configuration) { service in
                let request = try await service.request(for: Notes.get("note-0001"))
                #expect(request.url.path == "/notes/v1/notes/note-0001")
                #expect(request.url.query?.contains("key=k-s3kr1t") == true)
                #expect(request.headers["Accept"] == "application/json")
                let urlRequest = try request.makeURLRequest()
                #expect(urlRequest.httpMethod == "GET")
                #expect(urlRequest.value(forHTTPHeaderField: "Accept") == "application/json")
                let (data, response) = try await URLSession.shared.data(for: urlRequest)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(String(decoding: data, as: UTF8.self).contains("note-0001"))
            }
        }
    }

    @Test func aStreamedBodyCannotBecomeAURLRequest() throws {
        let chunks = AsyncStream<Data> { $0.finish() }
        let request = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1/x")!, body: .stream(chunks))
        #expect(throws: TransportError.invalidRequest) { try request.makeURLRequest() }
        var file = HTTPRequest(method: .put, url: URL(string: "http://127.0.0.1/x")!)
        file.body = .parts([.data(Data("a".utf8)), .data(Data("b".utf8))])
        #expect(try file.makeURLRequest().httpBody == Data("ab".utf8))
    }

    @Test func sessionURLsInHeadersAreRedacted() {
        let location = "https://storage.googleapis.com/upload/storage/v1/b/x/o?uploadType=resumable&upload_id=ADPycdv-s3kr1t"
        let redacted = Redaction.headerValue(name: "Location", value: location)
        #expect(!redacted.contains("s3kr1t"))
        #expect(redacted.contains("uploadType=resumable"))
        #expect(Redaction.headerValue(name: "X-GUploader-UploadID", value: "ok") == "ok")
        #expect(!Redaction.headerValue(name: "x-goog-upload-url", value: "/u?upload_id=s3kr1t").contains("s3kr1t"))
    }
}

/// An attempt that moved the data on before it failed earns a fresh retry budget, so a download
/// longer than the policy's deadline survives a reset (found across the `bad` link: a 256 MiB
/// download reset after 2 minutes gave up, the deadline being 120 s since the first attempt).
@Suite struct ProgressRetryBudgetTests {
    /// Each attempt keeps `step` more bytes, takes `duration`, and fails with a reset until the
    /// `succeedOn`-th attempt.
    struct SlowResumingTransmission: Transmission {
        let kept = LockedValue<Int64>(0)
        let attempts = LockedValue(0)
        let duration: Duration
        let step: Int64
        let succeedOn: Int

        nonisolated(nonsending) func send(_ request: HTTPRequest, through service: ServiceActor, tally: AttemptTally) async throws -> HTTPResponse {
            let attempt = attempts.withLock { $0 += 1; return $0 }
            try await Task.sleep(for: duration)
            kept.withLock { $0 += step }
            guard attempt >= succeedOn else { throw TransportError(.connectionLost, message: "reset mid-body") }
            return HTTPResponse(status: 200, body: Data("done".utf8), url: request.url)
        }

        nonisolated(nonsending) func mock(_ request: HTTPRequest, answer: HTTPResponse) async throws -> HTTPResponse { answer }
        func body(of output: HTTPResponse) -> Data? { output.body }
        func bytesKept() -> Int64 { kept.withLock { $0 } }
    }

    func run(_ transmission: SlowResumingTransmission, deadline: Duration) async throws -> HTTPResponse {
        try await withCheckedService { service in
            let policy = RetryPolicy(maxRetries: 2, initialDelay: 0...0, deadline: deadline)
            let context = service.rawContext(RequestOptions(), operation: .download, retry: policy)
            return try await service.pipeline(context).run(transmission) { HTTPRequest(url: URL(string: "http://127.0.0.1:9/data")!) }
        }
    }

    @Test func attemptsThatMakeProgressEachGetAFreshBudget() async throws {
        // Every attempt outlasts the deadline, and there are more attempts than maxRetries allows
        // on one budget: only a budget renewed by progress gets to the fourth.
        let transmission = SlowResumingTransmission(duration: .milliseconds(300), step: 1 << 20, succeedOn: 4)
        let response = try await run(transmission, deadline: .milliseconds(200))
        #expect(response.status == 200)
        #expect(transmission.attempts.withLock { $0 } == 4)
    }

    @Test(arguments: [0, 1 << 19])
    func attemptsWithoutProgressOrWithLittleKeepOneBudget(step: Int) async throws {
        // Under 1 MiB per attempt (a server that cuts every answer short) earns nothing: the
        // limits hold, so the fault matrix's stalls end in bounded time.
        let transmission = SlowResumingTransmission(duration: .milliseconds(300), step: Int64(step), succeedOn: 4)
        await #expect(throws: TransportError.connectionLost) { try await run(transmission, deadline: .milliseconds(200)) }
        #expect(transmission.attempts.withLock { $0 } == 1, "past the deadline, and too little progress: no retry")
    }
}
