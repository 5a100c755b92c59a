@testable import Courier
import CourierSync
import CourierTestSupport
import Foundation
import Testing

extension NetemScenarioTests {
    static let storage = APIDescription(name: "storage", version: "v1", rootURL: URL(string: "https://storage.googleapis.com/")!,
                                        servicePath: "storage/v1/")

    /// Cloud Storage's JSON API (fake-gcs-server on the far side) as a Google client meets it
    /// across the link: a resumable upload in fixed chunks over the lossy link, verified by the
    /// server's md5Hash and crc32c; a Range-resumed download across a 2 s flap and a second of
    /// resets, byte-exact; 20 small objects and a listing paged 5 at a time. (No flap during the
    /// upload: fake-gcs-server finalizes an upload at its status query, PEERS.md, so a resume
    /// after an error is proven against the test server instead.)
    @Test func cloudStorageAcrossTheLink() async throws {
        let storageRoot = try #require(link.storage, "the harness starts fake-gcs-server (COURIER_NETEM_GCS)")
        let link = link
        let size = min(link.uploadBytes, 64 << 20)
        let file = try PatternFile(size: size, name: "netem-gcs-\(UUID())")
        defer { file.remove() }
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-netem-gcs-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: target) }
        var configuration = configuration()
        configuration.queries.rootURL = storageRoot
        let started = ContinuousClock.now
        try await withCheckedService(configuration: configuration) { service in
            let retries = RetryCounter(service)
            let bucket = "netem-\(UUID().uuidString.prefix(8).lowercased())"
            var create = Query<GenericObject>(api: Self.storage, name: "storage.buckets.insert", method: .post, path: "b")
            create.parameters.set("project", "netem")
            create.body = ["name": .string(bucket)]
            _ = try await service.execute(create)

            var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream")
            parameters.chunkSize = 4 << 20
            parameters.adaptiveChunkSize = false
            let uploaded = try await service.upload(Self.insert(bucket: bucket, name: "big.bin", upload: parameters)).value
            #expect(uploaded.json["size"]?.stringValue == String(size)) // md5Hash and crc32c checked by the upload itself

            try await Self.download(bucket: bucket, size: size, to: target, storage: storageRoot, link: link, service: service)
            let expected = try Checksums.of(file: file.url)
            let got = try Checksums.of(file: target)
            #expect(got.byteCount == Int64(size) && got.md5 == expected.md5 && got.crc32c == expected.crc32c, "byte-exact")

            let (names, pages) = try await Self.storeAndList(bucket: bucket, service: service)
            #expect(Set(names).count == 20 && pages >= 4, "\(names.count) names in \(pages) pages")
            link.record("Cloud Storage (fake-gcs): upload, download across a flap, 20 objects listed", bytes: 2 * size,
                        retries: await retries.count, since: started)
        }
    }

    /// Downloads big.bin across a 2 s flap and then a second of resets.
    static func download(bucket: String, size: Int, to target: URL, storage: URL, link: NetemLink, service: ServiceActor) async throws {
        let received = LockedValue<Int64>(0)
        let flapped = Task {
            while received.withLock({ $0 }) < Int64(size) * 2 / 5 { try await Task.sleep(for: .milliseconds(20)) }
            try await link.flap(for: .seconds(2))
            while received.withLock({ $0 }) < Int64(size) * 11 / 20 { try await Task.sleep(for: .milliseconds(20)) }
            try await link.resetConnections(port: storage.port, for: .seconds(1))
        }
        var media = Query<MediaData>(api: Self.storage, name: "storage.objects.get", path: "/download/storage/v1/b/{bucket}/o/{object}",
                                     pathParameters: ["bucket": bucket, "object": "big.bin"])
        media.downloadsMedia = true
        let options = DownloadOptions(progress: { progress in received.withLock { $0 = progress.bytesWritten } })
        _ = try await NetemLink.awaiting(flapped) { try await service.downloadFile(media, to: target, options: options) }
    }

    /// Stores 20 small objects at once, then lists them 5 per page: their names and the pages read.
    static func storeAndList(bucket: String, service: ServiceActor) async throws -> ([String], Int) {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let small = UploadParameters(data: Data("object \(index)".utf8), mimeType: "text/plain", uploadProtocol: .multipart)
                    _ = try await service.execute(insert(bucket: bucket, name: "small/\(index).txt", upload: small))
                }
            }
            try await group.waitForAll()
        }
        var names: [String] = []
        var pageToken: String?
        var pages = 0
        repeat {
            var list = Query<GenericObject>(api: Self.storage, name: "storage.objects.list", path: "b/{bucket}/o", pathParameters: ["bucket": bucket])
            list.parameters.set("maxResults", 5)
            list.parameters.set("prefix", "small/")
            if let pageToken { list.parameters.set("pageToken", pageToken) }
            let page = try await service.execute(list)
            names += page.json["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            pageToken = page.json["nextPageToken"]?.stringValue
            pages += 1
        } while pageToken != nil && pages < 10
        return (names, pages)
    }

    static func insert(bucket: String, name: String, upload: UploadParameters) -> Query<GenericObject> {
        var query = Query<GenericObject>(api: storage, name: "storage.objects.insert", method: .post, path: "b/{bucket}/o",
                                         pathParameters: ["bucket": bucket])
        query.uploadPath = "/upload/storage/v1/b/{bucket}/o"
        query.parameters.set("name", name)
        query.body = ["name": .string(name)]
        query.upload = upload
        return query
    }
}
