import Courier
import CourierTestServer
import Foundation
import GoogleStorage
import CourierTestSupport
import Testing

/// The generated GoogleStorage client, and nothing else, against fake-gcs-server.
@Suite struct GoogleStorageEndToEndTests {
    func withStorage<T: Sendable>(_ body: (ServiceActor) async throws -> T) async throws -> T {
        try await withFakeGCS { gcs in
            var configuration = ServiceActor.Configuration.suite()
            configuration.queries.rootURL = gcs.baseURL
            return try await withCheckedService(configuration: configuration) { service in
                var bucket = GoogleStorage.Bucket()
                bucket.name = "e2e"
                let created = try await service.execute(Storage.Buckets.insert(bucket, project: "test"))
                #expect(created.name == "e2e")
                return try await body(service)
            }
        }
    }

    func insert(_ name: String, _ upload: UploadParameters) -> Storage.Objects.InsertQuery {
        var object = GoogleStorage.Object()
        object.name = name
        var insert = Storage.Objects.insert(object, bucket: "e2e", upload: upload)
        insert.name = name
        return insert
    }

    @Test func objectsLifeCycle() async throws {
        try await withStorage { service in
            // Multipart upload.
            let text = try await service.execute(insert("a.txt", UploadParameters(data: Data("hello".utf8), mimeType: "text/plain",
                                                                                    uploadProtocol: .multipart)))
            #expect(text.size == 5)
            #expect(text.contentType == "text/plain")

            // Resumable upload with pause and resume.
            let contents = Data(TestPattern.bytes(count: 3 << 20))
            var parameters = UploadParameters(data: contents, mimeType: "application/octet-stream")
            parameters.chunkSize = 256 << 10
            parameters.adaptiveChunkSize = false // fixed chunks, so the pause lands before the last one
            let task = service.upload(insert("big.bin", parameters))
            // Paused at once: the pause lands after the request in flight, with chunks left.
            // (Waiting to see bytes sent first raced the upload's end on a loaded machine: the
            // pause came after the last chunk, and nothing was left to pause.)
            task.pause()
            #expect(await eventually { task.isPaused })
            #expect(task.currentProgress.bytesSent < Int64(contents.count))
            task.resume()
            let big = try await task.value
            #expect(big.size == UInt64(contents.count))
            #expect(big.md5Hash != nil)

            for index in 0..<3 {
                _ = try await service.execute(insert("page-\(index).txt", UploadParameters(data: Data("\(index)".utf8),
                                                                                          mimeType: "text/plain", uploadProtocol: .media)))
            }

            // Listing with paging, two per page.
            var list = Storage.Objects.list(bucket: "e2e")
            list.maxResults = 2
            var pages = 0
            var names: [String] = []
            for try await page in service.pages(of: list) {
                pages += 1
                names += page.items.compactMap(\.name)
            }
            #expect(names.sorted() == ["a.txt", "big.bin", "page-0.txt", "page-1.txt", "page-2.txt"])
            #expect(pages == 3)

            // The same three pages merged into one by fetchAll, through the generated method.
            list.execution.paging = .fetchAll()
            let merged = try await service.execute(list)
            #expect(merged.count == 5)
            #expect(merged.compactMap(\.name).sorted() == names.sorted())
            #expect(merged.nextPageToken == nil)

            // Patch: set metadata, then clear a field with an explicit null.
            var metadata = GoogleStorage.Object()
            metadata.metadata = ["a": "1", "b": "2"]
            metadata.contentLanguage = "en"
            let patched = try await service.execute(Storage.Objects.patch(metadata, bucket: "e2e", object: "a.txt"))
            #expect(patched.metadata == ["a": "1", "b": "2"])
            #expect(patched.contentLanguage == "en")
            var clearing = GoogleStorage.Object()
            clearing.setNull("contentLanguage")
            clearing.metadata = nil
            clearing.json["metadata"] = ["a": nil]
            let clear = Storage.Objects.patch(clearing, bucket: "e2e", object: "a.txt")
            #expect(clear.makeQuery().body == ["contentLanguage": nil, "metadata": ["a": nil]]) // the nulls are sent
            let cleared = try await service.execute(clear)
            #expect(cleared.metadata?["b"] == "2")
            // fake-gcs sets a nulled metadata key to "" where Google removes it (PEERS.md), and keeps
            // a nulled top-level field (contentLanguage) as it was; Google removes both.
            #expect(cleared.metadata?["a"] ?? "" == "")

            // A partial response.
            var get = Storage.Objects.get(bucket: "e2e", object: "big.bin")
            get.fields = "name,size"
            let partial = try await service.execute(get)
            #expect(partial.name == "big.bin")
            #expect(partial.size == UInt64(contents.count))
            // fake-gcs ignores `fields` and answers with the whole object; Google would send only these two.

            // Media download to a file, resumed with Range from a partial file.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-e2e-\(UUID())")
            defer { try? FileManager.default.removeItem(at: file) }
            let media = Storage.Objects.get(bucket: "e2e", object: "big.bin").makeMediaQuery()
            #expect(media.usesMediaDownloadService) // storage.objects.get: `/download/storage/v1/…`, as Google's libraries go
            let whole = try await service.downloadFile(media, to: file)
            #expect(whole.resumedFrom == 0)
            #expect(try Data(contentsOf: file) == contents)
            var range = media
            range.headers["Range"] = "bytes=100-199"
            let ranged = try await service.execute(range)
            #expect(ranged.data == contents.subdata(in: 100..<200))

            // Batch delete, then a typed 404.
            var batch = QueryBatch()
            for name in ["page-0.txt", "page-1.txt", "page-2.txt"] { batch.add(Storage.Objects.delete(bucket: "e2e", object: name)) }
            let deleted = try await service.executeBatch(batch)
            #expect(deleted.failures.isEmpty)
            #expect(deleted.results.count == 3)
            let error = await #expect(throws: APIError.self) {
                try await service.execute(Storage.Objects.get(bucket: "e2e", object: "page-0.txt"))
            }
            #expect(error?.status == 404)
        }
    }

    /// A gzip-stored object (`contentEncoding=gzip`), which fake-gcs-server serves as Cloud Storage
    /// does (stored bytes and `Content-Encoding: gzip` to a client that accepts gzip, with the
    /// stored bytes' `x-goog-hash`): `downloadFile` gives the content by default and the stored
    /// bytes on request, both verified (issue 50; the storage testbench covers slices and breaks).
    @Test func aGzipStoredObjectDownloads() async throws {
        try await withStorage { service in
            let content = Data((0..<40_000).map { "\($0)\n" }.joined().utf8)
            let stored = Gzip.compress(content)
            var upload = insert("numbers.txt", UploadParameters(data: stored, mimeType: "text/plain", uploadProtocol: .media))
            upload.contentEncoding = "gzip"
            let object = try await service.execute(upload)
            #expect(object.contentEncoding == "gzip")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fgcs-gzip-\(UUID())")
            defer { try? FileManager.default.removeItem(at: file) }
            let media = Storage.Objects.get(bucket: "e2e", object: "numbers.txt").makeMediaQuery()
            _ = try await service.downloadFile(media, to: file)
            #expect(try Data(contentsOf: file) == content)
            _ = try await service.downloadFile(media, to: file, options: DownloadOptions(contentDecoding: .stored))
            #expect(try Data(contentsOf: file) == stored)
        }
    }
}
