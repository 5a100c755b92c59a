@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import Synchronization
import CourierTestSupport
import Testing

extension Notes {
    static func slow(_ milliseconds: Int) -> Query<GenericObject> {
        var query = Query<GenericObject>(api: TestAPIs.notes, name: "notes.slow", path: "slow")
        query.parameters.set("ms", milliseconds)
        return query
    }

    static func delay(_ milliseconds: Int) -> Query<GenericObject> {
        Query(api: TestAPIs.notes, name: "delay", path: URITemplate("/delay/\(milliseconds)"))
    }

    /// Answered once the test opens the server's gate `name` (``TestServerGates``).
    static func gate(_ name: String) -> Query<GenericObject> {
        Query(api: TestAPIs.notes, name: "gate", path: URITemplate("/gate/\(name)"))
    }
}

func withNotesService<T>(seed: Int = 0, configure: (inout ServiceActor.Configuration) -> Void = { _ in },
                         _ body: (TestServer, ServiceActor) async throws -> T) async throws -> T {
    try await withTestServer { server in
        if seed > 0 { server.notes.seed(count: seed) }
        var configuration = ServiceActor.Configuration.testing(server.baseURL)
        configure(&configuration)
        return try await withCheckedService(configuration: configuration) { service in try await body(server, service) }
    }
}

/// Task-group batches: concurrent queries, one result each.
@Suite struct TaskGroupBatchTests {
    @Test func heterogeneousQueriesWithResultsAndCompletionHandlersByRequestID() async throws {
        try await withNotesService(seed: 5) { _, service in
            let get = Notes.get("note-0001")
            let list = Notes.list(maxResults: 2)
            let missing = Notes.get("missing")
            var batch = QueryBatch(get, list, missing)
            final class Log: Sendable { let lines = LockedValue<[String]>([]) }
            let completions = Log()
            let delete = Notes.delete("note-0002")
            batch.add(delete) { result in
                if case .success = result { completions.lines.withLock { $0.append("deleted") } }
            }
            let results = try await service.batch(batch)
            #expect(completions.lines.withLock { $0 } == ["deleted"]) // before the batch returned
            #expect(try results.value(for: get).id == "note-0001")
            #expect(try results.value(for: list).items.count == 2)
            #expect(results.successes.count == 3)
            #expect(results.failures.count == 1)
            guard case .failure(let error as APIError)? = results[missing] else { Issue.record("expected a 404"); return }
            #expect(error.status == 404)
            #expect(results.requestIDs == [get.requestID, list.requestID, missing.requestID, delete.requestID])
        }
    }

    @Test func concurrencyIsBounded() async throws {
        try await withNotesService { server, service in
            // Held at a gate until four are at the server at once (50 ms delays need not overlap
            // on a loaded machine under ThreadSanitizer); a fifth would show in the peak.
            var batch = QueryBatch()
            for _ in 0..<30 { batch.add(Notes.gate("bounded")) }
            batch.maxConcurrency = 4
            server.counters.resetMaxInFlight()
            let run = Task { try await service.batch(batch) }
            try await openGate("bounded", of: server, when: 4)
            let results = try await run.value
            #expect(results.successes.count == 30)
            #expect(server.counters.maxInFlight == 4)
        }
    }

    @Test func oneFailureDoesNotCancelSiblingsUnlessFailFast() async throws {
        try await withNotesService(seed: 1, configure: { $0.retry = .disabled }) { _, service in
            var tolerant = QueryBatch(Notes.get("missing"))
            for _ in 0..<5 { tolerant.add(Notes.delay(100)) }
            tolerant.maxConcurrency = 6
            let all = try await service.batch(tolerant)
            #expect(all.successes.count == 5)

            var strict = QueryBatch(Notes.get("missing"))
            // Long delays, so that even on a loaded machine the 404 arrives first (4 s was not
            // always enough in CI); run to the end, these would take 4 rounds of 30 s.
            for _ in 0..<10 { strict.add(Notes.delay(30_000)) }
            strict.maxConcurrency = 3
            strict.failFast = true
            let started = ContinuousClock.now
            let cut = try await service.batch(strict)
            // No sibling ran to its end (each takes 30 s): the cut, whatever the machine's load.
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(cut.results.count == 11)
            #expect(cut.failures.values.contains { $0 is CancellationError })
            #expect(cut.successes.isEmpty)
        }
    }

    @Test func cancellingTheBatchCancelsEveryQuery() async throws {
        try await withNotesService(configure: { $0.limits.connections.maxConnectionsPerHost = 20 }) { server, service in
            var batch = QueryBatch()
            for _ in 0..<20 { batch.add(Notes.delay(30_000)) }
            batch.maxConcurrency = 20
            let task = Task { try await service.batch(batch) }
            let allStarted = await eventually { server.counters.inFlight == 20 }
            let stats = await service.stats
            #expect(allStarted, "in flight: \(server.counters.inFlight), \(stats)")
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            await expectNoLeaks(service)
        }
    }

    @Test func resultsAsTheyCompleteAndEarlyExitCancelsTheRest() async throws {
        try await withNotesService { _, service in
            var batch = QueryBatch(Notes.delay(10), Notes.delay(30_000), Notes.delay(30_000))
            batch.maxConcurrency = 3
            var first: String?
            for try await (requestID, result) in service.batchResults(batch) {
                if case .success = result { first = requestID }
                break
            }
            #expect(first == batch.requestIDs[0])
            #expect(await eventually { await service.stats.liveTransfers == 0 })
        }
    }
}

/// Google's multipart/mixed wire batch against the test server's `/batch/notes/v1`.
@Suite struct WireBatchTests {
    @Test func twoHundredFiftyMixedQueriesInThreeRequests() async throws {
        try await withNotesService(seed: 210) { server, service in
            var batch = QueryBatch()
            var gets: [Query<Note>] = []
            for index in 1...200 {
                let query = Notes.get(String(format: "note-%04d", index))
                gets.append(query)
                batch.add(query)
            }
            var inserts: [Query<Note>] = []
            for index in 0..<40 {
                var note = Note()
                note.id = "new-\(index)"
                note.title = "Inserted \(index)"
                let query = Notes.insert(note)
                inserts.append(query)
                batch.add(query)
            }
            // Chunks travel concurrently (as parts do inside one batch): delete notes nothing else reads.
            for index in 201...210 { batch.add(Notes.delete(String(format: "note-%04d", index))) }
            let before = server.counters.requests
            let results = try await service.executeBatch(batch)
            #expect(server.counters.requests - before == 3) // 100 + 100 + 50
            #expect(results.results.count == 250)
            #expect(results.failures.isEmpty, "\(results.failures.prefix(3))")
            for (index, query) in gets.enumerated() {
                #expect(try results.value(for: query).id == String(format: "note-%04d", index + 1))
            }
            #expect(try results.value(for: inserts[39]).title == "Inserted 39")
            #expect(server.notes.noteIDs.count == 210 + 40 - 10)
        }
    }

    @Test func aMixOfSuccess404And412Parts() async throws {
        try await withNotesService(seed: 2) { _, service in
            let ok = Notes.get("note-0001")
            let missing = Notes.get("nope")
            var stale = Note(json: ["id": "note-0002", "title": "stale write"])
            stale.etag = "\"v-old\""
            let conflict = Notes.update(stale)
            var patch = Note()
            patch.setNull("body")
            let patched = Notes.patch(id: "note-0001", patch)
            let results = try await service.executeBatch(QueryBatch(ok, missing, conflict, patched))
            #expect(try results.value(for: ok).title == "Note 1")
            #expect((results.failures[missing.requestID] as? APIError)?.status == 404)
            #expect((results.failures[missing.requestID] as? APIError)?.reason == "notFound")
            #expect((results.failures[conflict.requestID] as? APIError)?.status == 412)
            #expect(try results.value(for: patched).json["body"] == nil)
        }
    }

    @Test func partsThatCameBack401AreResentAfterOneRefresh() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 3)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = try AuthFixtures.refreshAuthorizer(server)
            try await withCheckedService(configuration: configuration) { service in
                let queries = (1...3).map { AuthFixtures.protectedNote(String(format: "note-%04d", $0)) }
                var first = QueryBatch()
                for query in queries { first.add(query) }
                #expect(try await service.executeBatch(first).successes.count == 3)
                #expect(server.tokens.refreshCount == 1)

                server.tokens.expireAllTokens()
                let again = queries.map { query -> Query<Note> in
                    var copy = query
                    copy.requestID = RequestID.next()
                    return copy
                }
                var second = QueryBatch()
                for query in again { second.add(query) }
                let before = server.counters.requests
                let results = try await service.executeBatch(second)
                #expect(results.successes.count == 3, "\(results.failures)")
                #expect(server.tokens.refreshCount == 2)
                #expect(server.counters.requests - before == 3) // batch (401 parts), token, batch again
            }
        }
    }

    @Test func pagingInsideABatchFollowsPagesPerQuery() async throws {
        try await withNotesService(seed: 25) { server, service in
            var all = Notes.list(maxResults: 10)
            all.execution.paging = .fetchAll
            var two = Notes.list(maxResults: 10)
            two.execution.paging = .fetchAll(maxPages: 2)
            let single = Notes.list(maxResults: 10)
            let before = server.counters.requests
            let results = try await service.executeBatch(QueryBatch(all, two, single))
            #expect(try results.value(for: all).items.count == 25)
            #expect(try results.value(for: all).nextPageToken == nil)
            #expect(try results.value(for: two).items.count == 20)
            #expect(try results.value(for: two).nextPageToken == "page-20")
            #expect(try results.value(for: single).items.count == 10)
            #expect(server.counters.requests - before == 3) // first pages, second pages, third page
        }
    }

    @Test func mediaQueriesAndDuplicateIDsAreRefused() async throws {
        try await withNotesService(seed: 1) { _, service in
            var media = Query<MediaData>(api: TestAPIs.notes, name: "media", path: "notes/{id}", pathParameters: ["id": "note-0001"])
            media.downloadsMedia = true
            let ok = Notes.get("note-0001")
            let results = try await service.executeBatch(QueryBatch(media, ok))
            #expect(results.failures[media.requestID] as? BatchError == .notAllowed)
            #expect(try results.value(for: ok).id == "note-0001")

            var twin = Notes.get("note-0001")
            twin.requestID = ok.requestID
            await #expect(throws: BatchError.duplicateRequestID) { try await service.executeBatch(QueryBatch(ok, twin)) }
        }
    }

    @Test(arguments: ["truncate", "nocontentid", "nothttp", "lfonly"])
    func brokenBatchResponsesGiveTypedErrorsPerQuery(mode: String) async throws {
        try await withNotesService(seed: 3) { _, service in
            let broken = APIDescription(name: "notes", version: "v1", rootURL: TestAPIs.notes.rootURL, servicePath: "notes/v1/",
                                        batchPath: "batch/broken/v1?mode=\(mode)")
            let queries = (1...3).map { index -> Query<Note> in
                var query = Notes.get(String(format: "note-%04d", index))
                query.api = broken
                return query
            }
            var batch = QueryBatch()
            for query in queries { batch.add(query) }
            let results = try await service.executeBatch(batch)
            switch mode {
            case "truncate":
                #expect(results.successes.count == 2)
                #expect(results.failures[queries[2].requestID] as? BatchError == .missingResponse)
            case "nocontentid":
                #expect(results.failures[queries[0].requestID] as? BatchError == .missingResponse)
                #expect(results.successes.count == 2)
            case "nothttp":
                #expect(results.failures[queries[0].requestID] as? BatchError == .malformedResponse)
                #expect(results.successes.count == 2)
            default:
                #expect(results.successes.count == 3, "\(results.failures)")
            }
        }
    }

    @Test func cancellingAWireBatchMidFlight() async throws {
        try await withNotesService { server, service in
            let task = Task { try await service.executeBatch(QueryBatch(Notes.slow(30_000), Notes.slow(30_000))) }
            #expect(await eventually { server.counters.inFlight == 1 })
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            await expectNoLeaks(service)
        }
    }

    /// The parts of an API that sends Cloud Storage's invocation headers carry them, each part
    /// its own ID through the follow-up batches that resend it (attempts 1, 2, 3), as Google's
    /// Python Storage library stamps the parts of its batches; the batch request carries none,
    /// and a caller's own token stays its part's ID.
    @Test func eachPartCarriesItsOwnInvocationAcrossFollowUpBatches() async throws {
        try await withNotesService(seed: 1, configure: {
            $0.queries.invocationHeaderAPIs = [TestAPIs.notes.name]
            $0.retry = RetryPolicy(maxRetries: 3, initialDelay: 0.01...0.02)
        }) { server, service in
            let flaky = Notes.flaky("invocation-\(UUID())", failures: 2)
            var steady = Notes.get("note-0001")
            let own = UUID().uuidString.lowercased()
            steady.headers["x-goog-gcs-idempotency-token"] = own
            let envelopes = server.counters.invocationCount
            let results = try await service.executeBatch(QueryBatch(flaky, steady))
            #expect(try results.value(for: flaky).json["attempts"]?.intValue == 3)
            #expect(server.counters.invocationCount == envelopes, "a batch request carried invocation headers")

            let parts = server.counters.batchParts
            try #require(parts.count == 4, "\(parts)") // both parts, then the flaky one twice more
            let tokens = try parts.map { try #require($0.token) }
            #expect(tokens.filter { $0 == own }.count == 1, "the caller's token names the steady part")
            let flakyToken = try #require(tokens.first { $0 != own })
            #expect(UUID(uuidString: flakyToken) != nil)
            let flakyParts = parts.filter { $0.token == flakyToken }
            #expect(flakyParts.map(\.client) == (1...3).map { "gccl-invocation-id/\(flakyToken) gccl-attempt-count/\($0) gl-swift/\(CourierVersion.swiftVersion)" })
            #expect(parts.first { $0.token == own }?.client?.hasPrefix("gccl-invocation-id/\(own) gccl-attempt-count/1 ") == true)
        }
    }

    /// A batch request sent again whole (a 503 before any part was read, every part idempotent)
    /// is another attempt of each part it carries.
    @Test func aResentBatchRequestCountsAnAttemptOfEachPart() async throws {
        try await withNotesService(seed: 2, configure: {
            $0.queries.invocationHeaderAPIs = [TestAPIs.notes.name]
            $0.retry = RetryPolicy(maxRetries: 3, initialDelay: 0.01...0.02)
            $0.auth.authorizer = FaultInjector("503x1")
        }) { server, service in
            let results = try await service.executeBatch(QueryBatch(Notes.get("note-0001"), Notes.get("note-0002")))
            #expect(results.successes.count == 2, "\(results.failures)")
            let parts = server.counters.batchParts // the first request's parts were never read
            #expect(parts.count == 2)
            #expect(Set(parts.compactMap(\.token)).count == 2)
            #expect(parts.allSatisfy { $0.client?.contains(" gccl-attempt-count/2 ") == true }, "\(parts)")
        }
    }

    /// Off (the default names only Cloud Storage), a part carries neither header.
    @Test func partsOfOtherAPIsCarryNone() async throws {
        try await withNotesService(seed: 2) { server, service in
            let results = try await service.executeBatch(QueryBatch(Notes.get("note-0001"), Notes.get("note-0002")))
            #expect(results.successes.count == 2)
            let parts = server.counters.batchParts
            #expect(parts.count == 2)
            #expect(parts.allSatisfy { $0.token == nil && $0.client == nil }, "\(parts)")
        }
    }
}

/// The service-wide limit: the seeds' "don't hog the backend".
@Suite struct ConcurrencyLimitTests {
    @Test func theLimitIsNeverExceededOnTheServer() async throws {
        try await withNotesService(configure: { $0.limits.maxConcurrentQueries = 5 }) { server, service in
            server.counters.resetMaxInFlight()
            // Held at a gate until the limit is reached (30 ms delays need not overlap on a loaded
            // machine); a sixth would show in the peak.
            let run = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<60 { group.addTask { _ = try await service.execute(Notes.gate("limit")) } }
                    try await group.waitForAll()
                }
            }
            try await openGate("limit", of: server, when: 5)
            try await run.value
            #expect(server.counters.maxInFlight == 5)
            #expect(server.counters.requests == 60)
        }
    }

    @Test func aQueuedQueryHonoursCancellation() async throws {
        try await withNotesService(configure: { $0.limits.maxConcurrentQueries = 1 }) { server, service in
            // The holder stays at the server's gate until the queued query has been cancelled,
            // however slowly this test's steps run.
            let holder = Task { try await service.execute(Notes.gate("holder")) }
            #expect(await eventually { server.counters.inFlight == 1 })
            let queued = Task { try await service.execute(Notes.delay(10)) }
            #expect(await eventually { service.limiter?.waiting == 1 })
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await queued.value }
            server.gates.open("holder")
            let held = try await holder.value
            #expect(held.json["gate"] == "holder")
            #expect(server.counters.requests == 1)
        }
    }

    @Test func waitersAreServedInArrivalOrder() async throws {
        let limiter = ConcurrencyLimiter(limit: 1)
        try await limiter.acquire()
        final class Order: Sendable { let items = LockedValue<[Int]>([]) }
        let order = Order()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<10 {
                group.addTask {
                    try await limiter.acquire()
                    order.items.withLock { $0.append(index) }
                    limiter.release()
                }
                // Each waiter is queued before the next one starts.
                while limiter.waiting < index + 1 { await Task.yield() }
            }
            limiter.release()
            try await group.waitForAll()
        }
        #expect(order.items.withLock { $0 } == Array(0..<10))
    }
}

/// The wire protocol against a real peer: fake-gcs-server's `/batch/storage/v1`.
@Suite struct FakeGCSBatchTests {
    static let storage = APIDescription(name: "storage", version: "v1", rootURL: URL(string: "https://storage.googleapis.com/")!,
                                        servicePath: "storage/v1/")

    @Test func gettingAndDeletingObjectsInOneBatch() async throws {
        try await withFakeGCS { gcs in
            var configuration = ServiceActor.Configuration.suite()
            configuration.queries.rootURL = gcs.baseURL
            try await withCheckedService(configuration: configuration) { service in
                var bucket = Query<GenericObject>(api: Self.storage, name: "storage.buckets.insert", method: .post, path: "b")
                bucket.parameters.set("project", "test")
                bucket.body = ["name": "batch-bucket"]
                _ = try await service.execute(bucket)
                for name in ["a.txt", "b.txt", "c.txt"] {
                    var upload = HTTPRequest(method: .post, url: URL(string: "\(gcs.baseURL)/upload/storage/v1/b/batch-bucket/o?uploadType=media&name=\(name)")!)
                    upload.body = .data(Data("content of \(name)".utf8))
                    #expect(try await service.send(upload).status == 200)
                }
                func object(_ name: String) -> Query<GenericObject> {
                    Query(api: Self.storage, name: "storage.objects.get", path: "b/{bucket}/o/{object}",
                          pathParameters: ["bucket": "batch-bucket", "object": name])
                }
                let a = object("a.txt"), b = object("b.txt"), missing = object("missing.txt")
                let deleteC = Query<NoContent>(api: Self.storage, name: "storage.objects.delete", method: .delete,
                                               path: "b/{bucket}/o/{object}", pathParameters: ["bucket": "batch-bucket", "object": "c.txt"])
                let results = try await service.executeBatch(QueryBatch(a, b, missing, deleteC))
                #expect(try results.value(for: a).json["name"] == "a.txt")
                #expect(try results.value(for: b).json["size"] == "16")
                #expect((results.failures[missing.requestID] as? APIError)?.status == 404)
                #expect(throws: Never.self) { try results.value(for: deleteC) }
                await #expect(throws: APIError.self) { try await service.execute(object("c.txt")) }
            }
        }
    }
}
