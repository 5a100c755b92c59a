import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// java-storage's table of resumable-upload scenarios (`ITJsonResumableSessionPutTaskTest`,
/// S.1 to S.7: what a client must do when the server's state and its own disagree), played
/// against the testbench where a session can be put in that state with plain requests.
///
/// - S.1 (a 200 to a chunk that does not end the upload) and S.7 (the server acknowledges bytes
///   never sent) need a server that answers against its own state; `UploadStateMachineTests`
///   holds them.
/// - S.3 differs by design: java-storage's single request cannot go back, so a server holding
///   fewer bytes than the client thought is `dataLoss` there. Courier sends the rest again from
///   a file or data (a stream fails as a protocol violation, as it cannot).
@Suite struct ResumableScenarioTests {
    static let half = Data(TestPattern.bytes(count: 256 << 10))
    static let whole = Data(TestPattern.bytes(count: 512 << 10))

    /// A session on the testbench, put into a state with the requests another client would send.
    static func session(_ testbench: StorageTestbench, service: ServiceActor, name: String,
                        chunks: [(range: String, body: Data)]) async throws -> URL {
        var initiate = HTTPRequest(method: .post,
                                   url: URL(string: "\(testbench.baseURL)/upload/storage/v1/b/b/o?uploadType=resumable&name=\(name)")!)
        initiate.headers["Content-Length"] = "0"
        let opened = try await service.send(initiate)
        let location = try #require(opened.headers["Location"].flatMap(URL.init(string:)))
        for chunk in chunks {
            var put = HTTPRequest(method: .put, url: location, body: .data(chunk.body))
            put.headers["Content-Range"] = chunk.range
            _ = try await service.send(put)
        }
        return location
    }

    static func resume(_ sessionURI: URL, offset: Int64, source: Data, verifyIntegrity: Bool, name: String,
                       service: ServiceActor) async throws -> GoogleStorage.Object {
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(source.subdata(in: Int(offset)..<source.count))
            continuation.finish()
        }
        var parameters = UploadParameters(stream: UploadStream(chunks), mimeType: "application/octet-stream")
        parameters.verifyIntegrity = verifyIntegrity
        var object = GoogleStorage.Object()
        object.name = name
        var insert = Storage.Objects.insert(object, bucket: "b", upload: parameters)
        insert.name = name
        let query = insert.makeQuery()
        let session = UploadSession(sessionURI: sessionURI, offset: offset, totalBytes: Int64(source.count), chunkSize: 256 << 10,
                                    mimeType: "application/octet-stream", file: nil, queryName: query.name,
                                    verifyIntegrity: verifyIntegrity)
        return try await service.resumeUpload(session, query: query).value
    }

    /// S.4: the session is already complete with this source's bytes: the status query returns
    /// the object, and nothing is sent again.
    @Test func s4AFinishedSessionOfTheSameBytesGivesItsObject() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            let uri = try await Self.session(testbench, service: service, name: "o", chunks: [("bytes 0-\(Self.half.count - 1)/\(Self.half.count)", Self.half)])
            let sentBefore = testbench.requests(to: "storage.objects.insert")
            let object = try await Self.resume(uri, offset: 0, source: Self.half, verifyIntegrity: true, name: "o", service: service)
            #expect(object.size == UInt64(Self.half.count))
            #expect(testbench.requests(to: "storage.objects.insert") == sentBefore + 1, "one status query, no bytes")
        }
    }

    /// S.4.1 and S.4.2: the session was completed with another number of bytes than this source
    /// has (more or fewer). The object is not this source: `dataLoss`, with or without checksums.
    /// Before, without checksums the upload returned the other object as its own.
    @Test(arguments: [true, false], [512 << 10, 128 << 10])
    func s4_1AFinishedSessionOfOtherBytesIsDataLoss(verifyIntegrity: Bool, sourceSize: Int) async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            // The session holds 256 KiB; the source is 512 KiB (S.4.1) or 128 KiB (S.4.2).
            let source = Data(TestPattern.bytes(count: sourceSize))
            let uri = try await Self.session(testbench, service: service, name: "o", chunks: [("bytes 0-\(Self.half.count - 1)/\(Self.half.count)", Self.half)])
            await #expect(throws: UploadError.dataLoss) {
                _ = try await Self.resume(uri, offset: 0, source: source, verifyIntegrity: verifyIntegrity, name: "o", service: service)
            }
        }
    }

    /// S.2: the server holds more bytes than the source has: a protocol violation, nothing sent.
    @Test func s2AServerHoldingMoreThanTheSourceIsAViolation() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            let uri = try await Self.session(testbench, service: service, name: "o", chunks: [("bytes 0-\(Self.whole.count - 1)/*", Self.whole)])
            await #expect(throws: UploadError.protocolViolation) {
                _ = try await Self.resume(uri, offset: 0, source: Self.half, verifyIntegrity: true, name: "o", service: service)
            }
            #expect(testbench.contents(bucket: "b", name: "o") == nil, "nothing was finalized")
        }
    }

    /// S.3: the client believes every byte arrived, the server holds half. From data Courier
    /// sends the rest again (java-storage's single request cannot, and reports `dataLoss`).
    @Test func s3AServerHoldingFewerBytesIsSentTheRest() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            let uri = try await Self.session(testbench, service: service, name: "o", chunks: [("bytes 0-\(Self.half.count - 1)/*", Self.half)])
            var object = GoogleStorage.Object()
            object.name = "o"
            var insert = Storage.Objects.insert(object, bucket: "b", upload: UploadParameters(data: Self.whole, mimeType: "application/octet-stream"))
            insert.name = "o"
            let query = insert.makeQuery()
            // A session a file upload saved, claiming all 512 KiB were acknowledged.
            let source = FileManager.default.temporaryDirectory.appendingPathComponent("courier-s3-\(UUID())")
            defer { try? FileManager.default.removeItem(at: source) }
            try Self.whole.write(to: source)
            var fileQuery = query
            fileQuery.upload = UploadParameters(file: source, mimeType: "application/octet-stream")
            let session = UploadSession(sessionURI: uri, offset: Int64(Self.whole.count), totalBytes: Int64(Self.whole.count),
                                        chunkSize: 256 << 10, mimeType: "application/octet-stream",
                                        file: try UploadSession.FileIdentity(of: source), queryName: query.name, verifyIntegrity: true)
            let stored = try await service.resumeUpload(session, query: fileQuery).value
            #expect(stored.size == UInt64(Self.whole.count))
            #expect(testbench.contents(bucket: "b", name: "o") == Self.whole)
        }
    }
}
