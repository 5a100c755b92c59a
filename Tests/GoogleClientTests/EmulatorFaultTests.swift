import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// storage-testbench's instructions beyond those `retry_tests.json` uses, run as Google's own
/// libraries run them against the emulator:
///
/// - `return-broken-stream-final-chunk-after-NB`: the request that completes a resumable upload
///   stores the object, but its 200 carries only N bytes of the object's JSON
///   (java-storage's `ITBlobWriteChannelTest` runs 0 and 10 bytes of a 512 KiB upload and expects
///   the upload to succeed with the object). Before, Courier threw a decoding error for an object
///   that existed and deleted the session that could have read it.
/// - `stall-for-Ns-after-NK`: in `EmulatorStallTimingTests`, which race real timeouts against the
///   emulator's pauses and so run with the timed tests, alone.
@Suite struct EmulatorFaultTests {
    static let contents = Data(TestPattern.bytes(count: 512 << 10))

    enum Way: String, CaseIterable, Sendable { case data, file, stream }

    static func parameters(_ way: Way, scratch: URL) throws -> UploadParameters {
        var parameters: UploadParameters
        switch way {
        case .data:
            parameters = UploadParameters(data: contents, mimeType: "application/octet-stream")
        case .file:
            try contents.write(to: scratch)
            parameters = UploadParameters(file: scratch, mimeType: "application/octet-stream")
        case .stream:
            let chunks = AsyncStream<Data> { continuation in
                for start in stride(from: 0, to: contents.count, by: 100_000) {
                    continuation.yield(contents.subdata(in: start..<min(start + 100_000, contents.count)))
                }
                continuation.finish()
            }
            parameters = UploadParameters(stream: UploadStream(chunks), mimeType: "application/octet-stream")
        }
        parameters.chunkSize = 256 << 10
        return parameters
    }

    static func insertQuery(_ parameters: UploadParameters, testID: String, precondition: Bool = true) -> Query<GoogleStorage.Object> {
        var object = GoogleStorage.Object()
        object.name = "uploaded"
        var insert = Storage.Objects.insert(object, bucket: "b", upload: parameters)
        insert.name = "uploaded"
        if precondition { insert.ifGenerationMatch = 0 }
        var query = insert.makeQuery()
        query.headers["x-retry-test-id"] = testID
        return query
    }

    static func statusQueries(_ testbench: StorageTestbench) -> Int {
        testbench.headers(of: "storage.objects.insert").filter { $0["content-range"]?.hasPrefix("bytes */") == true }.count
    }

    // MARK: return-broken-stream-final-chunk-after-NB

    @Test(arguments: [0, 10], Way.allCases)
    func aCutFinalAnswerIsReadAgainFromTheSession(bytes: Int, way: Way) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cut-final-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try await StorageTestbench.withEmulator { testbench, service in
            let id = try await testbench.createRetryTest(["storage.objects.insert": ["return-broken-stream-final-chunk-after-\(bytes)B"]], service: service)
            let stored = try await service.execute(Self.insertQuery(try Self.parameters(way, scratch: scratch), testID: id))
            #expect(stored.name == "uploaded")
            #expect(stored.size == UInt64(Self.contents.count))
            #expect(stored.crc32c != nil, "the whole object resource, read by the status query")
            #expect(testbench.retryTests.isCompleted(id), "the cut answer happened")
            #expect(Self.statusQueries(testbench) == 1, "one status query read the object")
            #expect(testbench.contents(bucket: "b", name: "uploaded") == Self.contents)
        }
    }

    @Test func anAnswerCutEveryTimeFailsTypedAndKeepsTheSessionToFinishLater() async throws {
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cut-source-\(UUID())")
        let sessionFile = source.appendingPathExtension("session")
        defer {
            try? FileManager.default.removeItem(at: source)
            try? FileManager.default.removeItem(at: sessionFile)
        }
        try await StorageTestbench.withEmulator { testbench, service in
            let cuts = Array(repeating: "return-broken-stream-final-chunk-after-10B", count: 4)
            let id = try await testbench.createRetryTest(["storage.objects.insert": cuts], service: service)
            var parameters = try Self.parameters(.file, scratch: source)
            parameters.sessionFile = sessionFile
            let query = Self.insertQuery(parameters, testID: id)
            await #expect(throws: QueryError.malformedResponse) { try await service.execute(query) }
            #expect(testbench.retryTests.isCompleted(id), "the final chunk and three status queries were cut")
            #expect(Self.statusQueries(testbench) == 3)
            #expect(testbench.contents(bucket: "b", name: "uploaded") == Self.contents, "the object exists")
            // The session survives, so the object's resource can still be read; no byte is sent again.
            let session = try UploadSession(contentsOf: sessionFile)
            #expect(session.offset == Int64(Self.contents.count))
            let sentBefore = testbench.headers(of: "storage.objects.insert").count
            let resumed = try await service.resumeUpload(from: sessionFile, query: query).value
            #expect(resumed.name == "uploaded" && resumed.size == UInt64(Self.contents.count))
            let sentAfter = testbench.headers(of: "storage.objects.insert")
            #expect(sentAfter.count == sentBefore + 1, "one status query")
            #expect(sentAfter.last?["content-range"] == "bytes */\(Self.contents.count)")
            #expect(!FileManager.default.fileExists(atPath: sessionFile.path), "the session ends with the upload")
        }
    }

    @Test func withRetriesOffACutAnswerStillEndsInTheObject() async throws {
        // Reading the stored object's resource writes nothing: it is part of the upload protocol,
        // not a retry of the upload.
        try await StorageTestbench.withEmulator { testbench, service in
            let id = try await testbench.createRetryTest(["storage.objects.insert": ["return-broken-stream-final-chunk-after-0B"]], service: service)
            var query = Self.insertQuery(try Self.parameters(.data, scratch: URL(fileURLWithPath: "/dev/null")), testID: id)
            query.execution.retry = .disabled
            let stored = try await service.execute(query)
            #expect(stored.size == UInt64(Self.contents.count))
            #expect(Self.statusQueries(testbench) == 1)
        }
    }
}
