import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// Objects stored gzip-compressed (`contentEncoding: gzip`), downloaded every way, against the
/// testbench's model of Cloud Storage's behaviour (issue 50). Before, `downloadFile` checked the
/// stored bytes' `x-goog-hash` against the bytes curl had decoded (an `IntegrityError` for a
/// correct object), sliced over stored offsets with decoding on (curl error 61), and resumed with
/// a decoded count as a stored offset.
@Suite struct GzipStoredDownloadTests {
    /// 3 MiB of text: lines of pseudo-random hexadecimal digits, which gzip shrinks by about 40 %.
    static let text: Data = {
        let digits = Array("0123456789abcdef".utf8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return Data((0..<(3 << 20)).map { index -> UInt8 in
            if index % 65 == 64 { return 10 }
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return digits[Int(state >> 60)]
        })
    }()
    static let stored = Gzip.compress(text)

    static func withObject<T: Sendable>(_ body: (StorageTestbench, ServiceActor, URL) async throws -> T) async throws -> T {
        let testbench = try await StorageTestbench.start()
        testbench.createBucket("b")
        testbench.createObject(bucket: "b", name: "text.gz", contents: stored, contentType: "text/plain", contentEncoding: "gzip")
        var configuration = ServiceActor.Configuration.suite()
        configuration.queries.rootURL = testbench.baseURL
        configuration.retry = RetryPolicy(maxRetries: 3, initialDelay: 0...0.005)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gzip-\(UUID())")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: file.appendingPathExtension("courier-download"))
            try? FileManager.default.removeItem(at: file.appendingPathExtension("courier-partial"))
        }
        do {
            let result = try await withCheckedService(configuration: configuration) { try await body(testbench, $0, file) }
            await testbench.stop()
            return result
        } catch {
            await testbench.stop()
            throw error
        }
    }

    static var media: Query<MediaData> { Storage.Objects.get(bucket: "b", object: "text.gz").makeMediaQuery() }
    static let sliced = SlicedDownloads(threshold: 1, maximumSlices: 4, minimumSliceSize: 64 << 10)

    @Test func theCompressionIsRealAndTheHashIsTheStoredBytes() {
        #expect(Self.stored.count < Self.text.count * 3 / 4 && Self.stored.count > 512 << 10)
        #expect(Gzip.decompress(Self.stored) == Self.text)
        // The model transcodes every member of an object composed of gzip parts, not the first.
        let half = Self.text.count / 2
        #expect(Gzip.decompress(Gzip.compress(Self.text.prefix(half)) + Gzip.compress(Self.text.dropFirst(half))) == Self.text)
    }

    @Test func oneStreamGivesTheDecodedContentByDefault() async throws {
        try await Self.withObject { testbench, service, file in
            let result = try await service.downloadFile(Self.media, to: file)
            #expect(try Data(contentsOf: file) == Self.text)
            #expect(result.bytes == Int64(Self.stored.count), "the stored bytes moved")
            #expect(result.slices == 1)
            let asked = testbench.headers(of: "storage.objects.get").last
            #expect(asked?["accept-encoding"] == "gzip")
        }
    }

    @Test func theStoredBytesWhenTheDownloadAsks() async throws {
        try await Self.withObject { _, service, file in
            _ = try await service.downloadFile(Self.media, to: file, options: DownloadOptions(contentDecoding: .stored))
            #expect(try Data(contentsOf: file) == Self.stored)
        }
    }

    @Test(arguments: [DownloadOptions.ContentDecoding.decoded, .stored])
    func slicedOverStoredOffsets(decoding: DownloadOptions.ContentDecoding) async throws {
        try await Self.withObject { testbench, service, file in
            let result = try await service.downloadFile(Self.media, to: file,
                                                        options: DownloadOptions(slicing: Self.sliced, contentDecoding: decoding))
            #expect(result.slices > 1)
            #expect(try Data(contentsOf: file) == (decoding == .decoded ? Self.text : Self.stored))
            let ranges = testbench.headers(of: "storage.objects.get").compactMap { $0["range"] }
            #expect(ranges.count == result.slices, "each slice asked for its stored range: \(ranges)")
            #expect(ranges.contains { $0.hasSuffix("-\(Self.stored.count - 1)") }, "the last slice ends at the last stored byte")
        }
    }

    @Test(arguments: [DownloadOptions.ContentDecoding.decoded, .stored])
    func resumedAfterABreakAtAStoredOffset(decoding: DownloadOptions.ContentDecoding) async throws {
        try await Self.withObject { testbench, service, file in
            let body = try JSONSerialization.data(withJSONObject: ["instructions": ["storage.objects.get": ["return-broken-stream-after-256K"]]])
            let created = try await service.send(HTTPRequest(method: .post, url: testbench.baseURL.appendingPathComponent("retry_test"),
                                                             body: .data(body)))
            let id = try #require((try JSONSerialization.jsonObject(with: created.body) as? [String: Any])?["id"] as? String)
            var query = Self.media
            query.headers["x-retry-test-id"] = id
            let result = try await service.downloadFile(query, to: file, options: DownloadOptions(slicing: nil, contentDecoding: decoding))
            #expect(try Data(contentsOf: file) == (decoding == .decoded ? Self.text : Self.stored))
            #expect(testbench.retryTests.isCompleted(id), "the stream broke")
            #expect(result.resumedFrom == 0)
            #expect(testbench.headers(of: "storage.objects.get").last?["range"] == "bytes=\(256 << 10)-",
                    "resumed at the stored offset where the break was")
        }
    }

    /// Media into memory: curl decodes as the service allows; the body is the content.
    @Test func mediaIntoMemoryIsTheContent() async throws {
        try await Self.withObject { _, service, _ in
            let media = try await service.execute(Self.media)
            #expect(media.data == Self.text)
        }
    }

    /// A client that does not offer gzip gets Cloud Storage's decompressive transcoding: the
    /// content, whole, whatever the Range (what the model serves, checked).
    @Test func theModelTranscodesForAClientThatDoesNotAcceptGzip() async throws {
        try await Self.withObject { testbench, service, _ in
            var request = HTTPRequest(url: testbench.baseURL.appendingPathComponent("download/storage/v1/b/b/o/text.gz"))
            request.url = URL(string: request.url.absoluteString + "?alt=media")!
            request.headers["Accept-Encoding"] = "identity"
            request.headers["Range"] = "bytes=10-20"
            let response = try await service.send(request)
            #expect(response.status == 200)
            #expect(response.body == Self.text)
            #expect(response.headers["x-guploader-response-body-transformations"] == "gunzipped")
            #expect(response.headers["Content-Encoding"] == nil)
        }
    }
}
