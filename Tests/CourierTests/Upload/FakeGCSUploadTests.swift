@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// Uploads and downloads against fake-gcs-server, which speaks the real Cloud Storage protocols
/// and computes md5Hash and crc32c itself. (Its status query finalizes an upload — PEERS.md —
/// so crash-resume is proven against Courier's own test server instead.)
@Suite struct FakeGCSUploadTests {
    static let storage = FakeGCSBatchTests.storage

    func insert(bucket: String, name: String, upload: UploadParameters) -> Query<GenericObject> {
        var query = Query<GenericObject>(api: Self.storage, name: "storage.objects.insert", method: .post, path: "b/{bucket}/o",
                                         pathParameters: ["bucket": bucket])
        query.uploadPath = "/upload/storage/v1/b/{bucket}/o"
        query.parameters.set("name", name)
        query.body = ["name": .string(name)]
        query.upload = upload
        return query
    }

    func withBucket<T: Sendable>(_ body: (FakeGCS, ServiceActor) async throws -> T) async throws -> T {
        try await withFakeGCS { gcs in
            var configuration = ServiceActor.Configuration.suite()
            configuration.queries.rootURL = gcs.baseURL
            return try await withCheckedService(configuration: configuration) { service in
                var bucket = Query<GenericObject>(api: Self.storage, name: "storage.buckets.insert", method: .post, path: "b")
                bucket.parameters.set("project", "test")
                bucket.body = ["name": "uploads"]
                _ = try await service.execute(bucket)
                return try await body(gcs, service)
            }
        }
    }

    @Test func resumableWithPauseAndResumeVerifiedByTheServersChecksums() async throws {
        try await withBucket { gcs, service in
            let file = try PatternFile(size: 8 << 20) // 32 chunks: the pause lands well before the end
            defer { file.remove() }
            var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream")
            parameters.chunkSize = 256 << 10
            parameters.adaptiveChunkSize = false // fixed chunks, so the pause lands before the last one
            let task = service.upload(insert(bucket: "uploads", name: "big.bin", upload: parameters))
            // Paused at once: it lands after the request in flight. (Waiting to see bytes sent
            // first could miss the upload's end on a loaded machine.)
            task.pause()
            #expect(await eventually { task.isPaused })
            #expect(task.currentProgress.bytesSent < 8 << 20)
            task.resume() // from the offset of the last 308: no status query, which fake-gcs would finalize
            let object = try await task.value // integrity verified against fake-gcs's md5Hash and crc32c
            #expect(object.json["size"] == .string("\(8 << 20)"))
            let media = try await service.send(HTTPRequest(url: URL(string: "\(gcs.baseURL)/download/storage/v1/b/uploads/o/big.bin?alt=media")!))
            #expect(media.body == file.contents)
        }
    }

    /// fake-gcs-server's deviation, met on purpose: its status query finalizes the upload with
    /// the bytes it holds (PEERS.md). A resumed upload whose status query meets it gets an object
    /// of half the source. Before, without checksums that object came back as the upload's
    /// result; the size the object names now makes it `UploadError.dataLoss`, checksums or not.
    @Test(arguments: [false, true])
    func aStatusQueryThatFinalizesTooEarlyIsDataLoss(verifyIntegrity: Bool) async throws {
        try await withBucket { gcs, service in
            let file = try PatternFile(size: 512 << 10)
            defer { file.remove() }
            var initiate = HTTPRequest(method: .post, url: URL(string: "\(gcs.baseURL)/upload/storage/v1/b/uploads/o?uploadType=resumable&name=half.bin")!)
            initiate.headers["Content-Type"] = "application/json"
            initiate.body = .data(Data(#"{"name":"half.bin"}"#.utf8))
            let opened = try await service.send(initiate)
            let sessionURI = try #require(opened.headers["Location"].flatMap(URL.init(string:)))
            var first = HTTPRequest(method: .put, url: sessionURI, body: .data(file.contents.prefix(256 << 10)))
            first.headers["Content-Range"] = "bytes 0-\((256 << 10) - 1)/\(512 << 10)"
            #expect(try await service.send(first).status == 308)

            var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream")
            parameters.verifyIntegrity = verifyIntegrity
            let query = insert(bucket: "uploads", name: "half.bin", upload: parameters)
            // A crash after the first chunk: the saved offset is unknown to the new process.
            let session = UploadSession(sessionURI: sessionURI, offset: 0, totalBytes: 512 << 10, chunkSize: 256 << 10,
                                        mimeType: "application/octet-stream", file: try UploadSession.FileIdentity(of: file.url),
                                        queryName: query.name, verifyIntegrity: verifyIntegrity)
            let error = await #expect(throws: UploadError.dataLoss) { try await service.resumeUpload(session, query: query).value }
            #expect(error?.message == "the server's object holds \(256 << 10) bytes; the source has \(512 << 10)")
        }
    }

    @Test func multipartAndMediaUploads() async throws {
        try await withBucket { gcs, service in
            let related = try await service.execute(insert(bucket: "uploads", name: "related.txt",
                                                           upload: UploadParameters(data: Data("multipart body".utf8), mimeType: "text/plain",
                                                                                    uploadProtocol: .multipart)))
            #expect(related.json["name"] == "related.txt")
            #expect(related.json["contentType"] == "text/plain")
            let media = try await service.execute(insert(bucket: "uploads", name: "media.txt",
                                                         upload: UploadParameters(data: Data("media body".utf8), mimeType: "text/plain",
                                                                                  uploadProtocol: .media)))
            #expect(media.json["size"] == "10")
        }
    }

    @Test func downloadResumesWithRange() async throws {
        try await withBucket { gcs, service in
            let contents = Data(TestPattern.bytes(count: 800_000))
            var parameters = UploadParameters(data: contents, mimeType: "application/octet-stream", uploadProtocol: .media)
            parameters.verifyIntegrity = true
            _ = try await service.execute(insert(bucket: "uploads", name: "dl.bin", upload: parameters))

            var get = Query<MediaData>(api: Self.storage, name: "storage.objects.get", path: "b/{bucket}/o/{object}",
                                       pathParameters: ["bucket": "uploads", "object": "dl.bin"])
            get.downloadsMedia = true
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gcs-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            // The first 300,000 bytes are already here, as an interrupted download leaves them.
            let first = try await service.stream(try RequestBuilder.build(get, configuration: service.configuration))
            try contents.prefix(300_000).write(to: PartialDownload.dataFile(for: target))
            let url = try RequestBuilder.build(get, configuration: service.configuration).url.absoluteString
            try JSONEncoder().encode(PartialDownload(url: url, etag: first.headers["ETag"], lastModified: first.headers["Last-Modified"],
                                                     totalBytes: 800_000)).write(to: PartialDownload.sidecar(for: target))
            let result = try await service.downloadFile(get, to: target)
            #expect(result.resumedFrom == 300_000)
            #expect(try Data(contentsOf: target) == contents)
        }
    }

    @Test func aSlicedDownloadFromFakeGCSServerVerifiesByCombinedCRC32C() async throws {
        try await withBucket { _, service in
            let contents = Data(TestPattern.bytes(count: 3_000_000))
            _ = try await service.execute(insert(bucket: "uploads", name: "sliced.bin",
                                                 upload: UploadParameters(data: contents, mimeType: "application/octet-stream")))
            var get = Query<MediaData>(api: Self.storage, name: "storage.objects.get", path: "b/{bucket}/o/{object}",
                                       pathParameters: ["bucket": "uploads", "object": "sliced.bin"])
            get.downloadsMedia = true
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gcs-sliced-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            let slicing = SlicedDownloads(threshold: 1 << 20, maximumSlices: 4, minimumSliceSize: 256 << 10)
            let result = try await service.downloadFile(get, to: target, options: DownloadOptions(slicing: slicing))
            #expect(result.slices == 4)
            #expect(try Data(contentsOf: target) == contents)
        }
    }
}
