import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoldenNotes
import GoogleStorage
import Testing

/// Retries as the API's owner classes its methods, not as HTTP does (issue 50), and the query's
/// headers on every request an operation makes, against the test server's storage-testbench.
@Suite struct MethodIdempotencyTests {
    /// A DELETE of an object without `ifGenerationMatch` reaches the server once after a reset:
    /// repeating it could delete a generation written in between. With the precondition it is
    /// sent again, and succeeds.
    @Test func anObjectDeleteIsResentOnlyWithItsPrecondition() async throws {
        try await StorageTestbench.withEmulator(configure: { $0.retry = RetryPolicy(maxRetries: 3, initialDelay: 0...0.005) }) { testbench, service in
            let generation = testbench.createObject(bucket: "b", name: "o", contents: Data("x".utf8))

            let unguarded = try await testbench.createRetryTest(["storage.objects.delete": ["return-reset-connection"]], service: service)
            var delete = Storage.Objects.delete(bucket: "b", object: "o").makeQuery()
            delete.headers["x-retry-test-id"] = unguarded
            await #expect(throws: TransportError.self) { try await service.execute(delete) }
            #expect(testbench.requests(to: "storage.objects.delete") == 1)
            #expect(testbench.contents(bucket: "b", name: "o") != nil)

            let guarded = try await testbench.createRetryTest(["storage.objects.delete": ["return-reset-connection"]], service: service)
            var conditional = Storage.Objects.delete(bucket: "b", object: "o")
            conditional.ifGenerationMatch = generation
            var query = conditional.makeQuery()
            query.headers["x-retry-test-id"] = guarded
            _ = try await service.execute(query)
            #expect(testbench.requests(to: "storage.objects.delete") == 3) // once above, twice here
            #expect(testbench.contents(bucket: "b", name: "o") == nil)
            #expect(testbench.retryTests.isCompleted(guarded))
        }
    }

    /// `buckets.insert` is a POST Google classes as always idempotent (a name is created once):
    /// re-sent after a 503. An ACL delete is a DELETE Google classes as never: not re-sent.
    @Test func theMethodsClassDecidesNotItsHTTPMethod() async throws {
        try await StorageTestbench.withEmulator(configure: { $0.retry = RetryPolicy(maxRetries: 3, initialDelay: 0...0.005) }) { testbench, service in
            testbench.createBucket("b", entity: "user-a@example.com")
            let insertTest = try await testbench.createRetryTest(["storage.buckets.insert": ["return-503"]], service: service)
            var bucket = GoogleStorage.Bucket()
            bucket.name = "created"
            var insert = Storage.Buckets.insert(bucket, project: "p").makeQuery()
            insert.headers["x-retry-test-id"] = insertTest
            #expect(try await service.execute(insert).name == "created")
            #expect(testbench.requests(to: "storage.buckets.insert") == 2)

            let aclTest = try await testbench.createRetryTest(["storage.bucket_acl.delete": ["return-503"]], service: service)
            var aclDelete = Storage.BucketAccessControls.delete(bucket: "b", entity: "user-a@example.com").makeQuery()
            aclDelete.headers["x-retry-test-id"] = aclTest
            await #expect(throws: APIError.self) { try await service.execute(aclDelete) }
            #expect(testbench.requests(to: "storage.bucket_acl.delete") == 1)

            // A query's own declaration still wins over its method's class.
            let declared = try await testbench.createRetryTest(["storage.bucket_acl.delete": ["return-503"]], service: service)
            aclDelete.headers["x-retry-test-id"] = declared
            aclDelete.execution.idempotency = .always
            _ = try await service.execute(aclDelete)
            #expect(testbench.requests(to: "storage.bucket_acl.delete") == 3)
        }
    }

    /// A header set on the query reaches every request its resumable upload makes (initiation,
    /// each chunk, the status query after a failure) and every request of its download (the
    /// first and the resumption after a broken stream), counted by the server.
    @Test func aQuerysHeadersReachEveryRequestOfItsUploadAndDownload() async throws {
        try await StorageTestbench.withEmulator(configure: { $0.retry = RetryPolicy(maxRetries: 3, initialDelay: 0...0.005) }) { testbench, service in
            let contents = Data(TestPattern.bytes(count: 1 << 20))
            var parameters = UploadParameters(data: contents, mimeType: "application/octet-stream")
            parameters.chunkSize = 256 << 10
            parameters.adaptiveChunkSize = false
            var object = GoogleStorage.Object()
            object.name = "big"
            var insert = Storage.Objects.insert(object, bucket: "b", upload: parameters)
            insert.name = "big"
            insert.ifGenerationMatch = 0
            var upload = insert.makeQuery()
            let uploadTest = try await testbench.createRetryTest(["storage.objects.insert": ["return-503-after-512K"]], service: service)
            upload.headers["x-retry-test-id"] = uploadTest
            upload.headers["x-goog-user-project"] = "billing-project"
            upload.headers["x-goog-encryption-algorithm"] = "AES256"
            _ = try await service.execute(upload)
            let uploadRequests = testbench.headers(of: "storage.objects.insert")
            #expect(uploadRequests.count >= 6, "initiation, four chunks, the failed one's status query: \(uploadRequests.count)")
            for headers in uploadRequests {
                #expect(headers["x-goog-user-project"] == "billing-project")
                #expect(headers["x-goog-encryption-algorithm"] == "AES256")
            }
            #expect(testbench.retryTests.isCompleted(uploadTest), "the fault was meant for a chunk, and a chunk met it")
            #expect(testbench.contents(bucket: "b", name: "big") == contents)

            let downloadTest = try await testbench.createRetryTest(["storage.objects.get": ["return-broken-stream-after-256K"]], service: service)
            var download = Storage.Objects.get(bucket: "b", object: "big").makeMediaQuery()
            download.headers["x-retry-test-id"] = downloadTest
            download.headers["x-goog-user-project"] = "billing-project"
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-headers-\(UUID())")
            defer { try? FileManager.default.removeItem(at: file) }
            _ = try await service.downloadFile(download, to: file, options: DownloadOptions(slicing: nil))
            #expect(try Data(contentsOf: file) == contents)
            let downloadRequests = testbench.headers(of: "storage.objects.get")
            #expect(downloadRequests.count == 2, "the first request and its resumption")
            #expect(downloadRequests.allSatisfy { $0["x-goog-user-project"] == "billing-project" })
            #expect(downloadRequests.last?["range"] == "bytes=\(256 << 10)-", "the resumption continues where the break was")
        }
    }

    /// A write whose server ignores a repeated request ID (AIP-155, as Compute Engine's
    /// `requestId`): its answer lost after the server applied it (a 503 in its place), the
    /// generated query is re-sent with the same ID, and the server answers the note it made once.
    /// Without the parameter the same write is not re-sent: the caller gets the 503.
    @Test func aWriteWithARequestIDIsResentWithTheSameIDAndAppliedOnce() async throws {
        try await withServerAndService(configure: { $0.retry = RetryPolicy(maxRetries: 3, initialDelay: 0...0.005) }) { server, service in
            var query = GoldenNotes.Notes.Notes.insert(GoldenNotes.Note(json: ["title": "once"])).makeQuery()
            query.execution.rootURL = server.baseURL
            query.headers["X-Courier-Fault"] = "applied-503x1;run=deduplicated"
            let note = try await service.execute(query)
            var ids = server.notes.insertRequestIDs
            try #require(ids.count == 2, "sent, applied, answer lost; sent again")
            #expect(ids[0] != nil && ids[0] == ids[1], "both attempts carry one ID: \(ids)")
            #expect(server.notes.count == 1 && note.title == "once" && note.id != nil)

            // The same query executed again is a new request: a new ID, a new note.
            query.headers["X-Courier-Fault"] = nil
            let second = try await service.execute(query)
            ids = server.notes.insertRequestIDs
            try #require(ids.count == 3)
            #expect(ids[2] != nil && ids[2] != ids[0] && second.id != note.id)
            #expect(server.notes.count == 2)

            // The parameter undeclared: the write may have arrived, so it is not sent twice.
            query.deduplicationParameter = nil
            query.headers["X-Courier-Fault"] = "applied-503x1;run=undeclared"
            await #expect(throws: APIError.self) { try await service.execute(query) }
            ids = server.notes.insertRequestIDs
            try #require(ids.count == 4)
            #expect(ids[3] == nil)
            #expect(server.notes.count == 3, "applied once, reported as the 503 it met")
        }
    }
}
