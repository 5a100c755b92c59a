import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// Cloud Storage's invocation headers, as Google's Storage libraries send them: one
/// `x-goog-gcs-idempotency-token` for all the attempts of a request, and `x-goog-api-client`
/// with the same ID and the attempt's number. Read off what the storage-testbench model received.
@Suite struct InvocationHeaderTests {
    /// `gccl-invocation-id/<id> gccl-attempt-count/<n> gl-swift/<version>`, taken apart.
    struct ClientHeader: Equatable {
        var id: String
        var attempt: Int
        var rest: [Substring]

        init?(_ value: String?) {
            guard let words = value?.split(separator: " "), words.count >= 3,
                  words[0].hasPrefix("gccl-invocation-id/"), words[1].hasPrefix("gccl-attempt-count/"),
                  let attempt = Int(words[1].dropFirst("gccl-attempt-count/".count)),
                  words[2].hasPrefix("gl-swift/")
            else { return nil }
            id = String(words[0].dropFirst("gccl-invocation-id/".count))
            self.attempt = attempt
            rest = Array(words.dropFirst(3))
        }
    }

    /// A 503 twice, then the bucket: three requests, one token, attempts 1, 2, 3; the next call
    /// is a new invocation.
    @Test func theAttemptsOfOneRequestShareAnInvocation() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            let test = try await testbench.createRetryTest(["storage.buckets.insert": ["return-503", "return-503"]], service: service)
            var bucket = GoogleStorage.Bucket()
            bucket.name = "created"
            var insert = Storage.Buckets.insert(bucket, project: "p").makeQuery()
            insert.headers["x-retry-test-id"] = test
            _ = try await service.execute(insert)
            let seen = testbench.headers(of: "storage.buckets.insert")
            try #require(seen.count == 3)
            let clients = seen.map { ClientHeader($0["x-goog-api-client"]) }
            #expect(clients.map { $0?.attempt } == [1, 2, 3], "\(seen.map { $0["x-goog-api-client"] ?? "none" })")
            let token = try #require(seen[0]["x-goog-gcs-idempotency-token"])
            #expect(UUID(uuidString: token) != nil, "a random UUID: \(token)")
            #expect(seen.allSatisfy { $0["x-goog-gcs-idempotency-token"] == token })
            #expect(clients.allSatisfy { $0?.id == token })

            bucket.name = "another"
            _ = try await service.execute(Storage.Buckets.insert(bucket, project: "p"))
            let next = try #require(testbench.headers(of: "storage.buckets.insert").last)
            #expect(next["x-goog-gcs-idempotency-token"] != token, "a new request is a new invocation")
            #expect(ClientHeader(next["x-goog-api-client"])?.attempt == 1)
        }
    }

    /// The headers change nothing about what is retried: an ACL delete Google classes as never
    /// idempotent still reaches the server once after a 503, token or not.
    @Test func aTokenDoesNotMakeAWriteRetried() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            testbench.createBucket("acl", entity: "user-a@example.com")
            let test = try await testbench.createRetryTest(["storage.bucket_acl.delete": ["return-503"]], service: service)
            var delete = Storage.BucketAccessControls.delete(bucket: "acl", entity: "user-a@example.com").makeQuery()
            delete.headers["x-retry-test-id"] = test
            await #expect(throws: APIError.self) { try await service.execute(delete) }
            let seen = testbench.headers(of: "storage.bucket_acl.delete")
            #expect(seen.count == 1)
            #expect(seen.first?["x-goog-gcs-idempotency-token"] != nil)
        }
    }

    /// Every request of a resumable upload whose chunk fails carries a consistent pair, and the
    /// upload's recovery of a chunk (its status query) continues the chunk's invocation, as
    /// google-cloud-go keeps one per chunk across its retries.
    @Test func everyRequestOfAnUploadCarriesThem() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            func upload(_ name: String) -> Query<GoogleStorage.Object> {
                var parameters = UploadParameters(data: Data(TestPattern.bytes(count: 1 << 20)), mimeType: "application/octet-stream")
                parameters.chunkSize = 256 << 10
                parameters.adaptiveChunkSize = false
                var object = GoogleStorage.Object()
                object.name = name
                var insert = Storage.Objects.insert(object, bucket: "b", upload: parameters)
                insert.ifGenerationMatch = 0
                return insert.makeQuery()
            }
            var first = upload("big")
            let test = try await testbench.createRetryTest(["storage.objects.insert": ["return-503-after-512K"]], service: service)
            first.headers["x-retry-test-id"] = test
            _ = try await service.execute(first)
            let seen = testbench.headers(of: "storage.objects.insert")
            #expect(seen.count >= 6)
            for headers in seen {
                let client = ClientHeader(headers["x-goog-api-client"])
                #expect(client != nil && client?.id == headers["x-goog-gcs-idempotency-token"], "\(headers)")
            }
            // The chunk that met the 503 and the status query after it are one invocation; the
            // query found the chunk stored, so the next chunk starts a new one.
            let failed = try #require(seen.firstIndex { $0["content-range"]?.hasPrefix("bytes */") == true })
            let failedID = seen[failed]["x-goog-gcs-idempotency-token"]
            #expect(seen.filter { $0["x-goog-gcs-idempotency-token"] == failedID }.map { ClientHeader($0["x-goog-api-client"])?.attempt }
                == [1, 2], "\(seen.map { ($0["content-range"] ?? "-", $0["x-goog-api-client"] ?? "-") })")
            #expect(Set(seen.map { $0["x-goog-gcs-idempotency-token"] }).count == seen.count - 1,
                    "every other request (the initiation, each chunk) is an invocation of its own")
            #expect(testbench.retryTests.isCompleted(test))

            // An initiation refused with a 503 is sent again as attempt 2 of its invocation.
            let refused = try await testbench.createRetryTest(["storage.objects.insert": ["return-503"]], service: service)
            var second = upload("second")
            second.headers["x-retry-test-id"] = refused
            let before = seen.count
            _ = try await service.execute(second)
            let again = Array(testbench.headers(of: "storage.objects.insert").dropFirst(before))
            #expect(again.prefix(2).map { ClientHeader($0["x-goog-api-client"])?.attempt } == [1, 2])
            #expect(again.count > 2 && again[0]["x-goog-gcs-idempotency-token"] == again[1]["x-goog-gcs-idempotency-token"]
                && again[1]["x-goog-gcs-idempotency-token"] != again[2]["x-goog-gcs-idempotency-token"],
                    "the initiation's two attempts are one invocation, the first chunk another")
            #expect(testbench.retryTests.isCompleted(refused))
        }
    }

    /// A caller's own token is the invocation's ID, and its own `x-goog-api-client` words follow
    /// the invocation's.
    @Test func aCallersOwnTokenAndClientWordsAreKept() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            var get = Storage.Buckets.get(bucket: "b").makeQuery()
            get.headers["x-goog-gcs-idempotency-token"] = "caller-token-1"
            get.headers["x-goog-api-client"] = "myapp/2.0"
            _ = try await service.execute(get)
            let seen = try #require(testbench.headers(of: "storage.buckets.get").last)
            #expect(seen["x-goog-gcs-idempotency-token"] == "caller-token-1")
            let client = try #require(ClientHeader(seen["x-goog-api-client"]))
            #expect(client.id == "caller-token-1" && client.attempt == 1 && client.rest == ["myapp/2.0"])
        }
    }

    /// Turned off, or for another API, no request carries them.
    @Test func offOrForAnotherAPINoneIsSent() async throws {
        try await StorageTestbench.withEmulator(configure: { $0.queries.invocationHeaderAPIs = [] }) { testbench, service in
            _ = try await service.execute(Storage.Buckets.get(bucket: "b"))
            let seen = try #require(testbench.headers(of: "storage.buckets.get").last)
            #expect(seen["x-goog-gcs-idempotency-token"] == nil && seen["x-goog-api-client"] == nil)
        }
        try await withServerAndService { server, service in
            var echo = Query<GenericObject>(api: TestAPIs.notes, name: "notes.echo", path: "/echo")
            echo.execution.rootURL = server.baseURL
            let answer = try await service.execute(echo)
            let names = answer.json["headers"]?.arrayValue?.compactMap { $0[0]?.stringValue?.lowercased() } ?? []
            #expect(!names.isEmpty, "the echo lists the headers it received")
            #expect(!names.contains("x-goog-gcs-idempotency-token") && !names.contains("x-goog-api-client"))
        }
    }
}
