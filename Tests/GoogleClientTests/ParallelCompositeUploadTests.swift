import Courier
import CourierSync
import CourierTestServer
import Foundation
import GoogleStorage
import CourierTestSupport
import Testing

/// Parallel composite uploads against fake-gcs-server: parts in parallel, composed on the
/// server, parts deleted whatever happens, the final CRC32C checked.
@Suite struct ParallelCompositeUploadTests {
    static let composite = ParallelCompositeUpload(threshold: 1 << 20, maximumParts: 5, minimumPartSize: 256 << 10, concurrency: 3)

    /// Sends the initiation of the parts whose names end in `failing` to `faultURL` instead
    /// (a real server answering the status there), `times` times.
    final class PartFaults: Authorizer {
        let failing: String
        let faultURL: URL
        let remaining: LockedValue<Int>
        let redirected = LockedValue(0)
        init(failing: String, faultURL: URL, times: Int) {
            self.failing = failing
            self.faultURL = faultURL
            remaining = LockedValue(times)
        }

        func authorize(_ request: inout HTTPRequest) async throws {
            let query = request.url.query ?? ""
            guard query.contains("uploadType=resumable"), query.contains(failing) else { return }
            let strike = remaining.withLock { count in
                guard count > 0 else { return false }
                count -= 1
                return true
            }
            guard strike else { return }
            redirected.withLock { $0 += 1 }
            request.url = faultURL
        }

        func invalidate(_ rejected: HTTPRequest) async {}
    }

    func withStorage(faults: (TestServer) -> PartFaults? = { _ in nil },
                     _ body: (ServiceActor, PartFaults?) async throws -> Void) async throws {
        try await withTestServer { server in
            let injector = faults(server)
            try await withFakeGCS { gcs in
                var configuration = ServiceActor.Configuration.suite()
                configuration.queries.rootURL = gcs.baseURL
                configuration.retry = RetryPolicy(maxRetries: 3, initialDelay: 0.01...0.02)
                configuration.auth.authorizer = injector
                try await withCheckedService(configuration: configuration) { service in
                    var bucket = GoogleStorage.Bucket()
                    bucket.name = "pcu"
                    _ = try await service.execute(Storage.Buckets.insert(bucket, project: "test"))
                    try await body(service, injector)
                }
            }
        }
    }

    func temporaryObjects(_ service: ServiceActor) async throws -> [String] {
        var list = Storage.Objects.list(bucket: "pcu")
        list.prefix = "courier-tmp/"
        return try await service.execute(list).map { $0.name ?? "" }
    }

    @Test func fivePartsWithOneFailingOnceComposeAndLeaveNoParts() async throws {
        let file = try PatternFile(size: 5 << 20, name: "pcu")
        defer { file.remove() }
        try await withStorage(faults: { server in PartFaults(failing: "00002", faultURL: server.url("/status/503"), times: 1) }) { service, faults in
            var metadata = GoogleStorage.Object()
            metadata.name = "big.bin"
            let object = try await service.uploadObject(from: file.url, bucket: "pcu", metadata: metadata, composite: Self.composite)
            #expect(object.size == UInt64(5 << 20))
            #expect(object.crc32c == (try Checksums.of(file: file.url, md5: false)).crc32cBase64)
            #expect(faults?.redirected.withLock { $0 } == 1) // part 2's initiation was answered 503 once, then retried
            #expect(try await temporaryObjects(service).isEmpty)
            let get = Storage.Objects.get(bucket: "pcu", object: "big.bin")
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-pcu-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            _ = try await service.downloadFile(get.makeQuery(), to: target)
            #expect(try Data(contentsOf: target) == file.contents)
        }
    }

    @Test func aPartThatKeepsFailingFailsTheUploadAndTheOtherPartsAreDeleted() async throws {
        let file = try PatternFile(size: 5 << 20, name: "pcu-fail")
        defer { file.remove() }
        try await withStorage(faults: { server in PartFaults(failing: "00003", faultURL: server.url("/status/403"), times: 100) }) { service, _ in
            var metadata = GoogleStorage.Object()
            metadata.name = "never.bin"
            let error = await #expect(throws: APIError.self) {
                try await service.uploadObject(from: file.url, bucket: "pcu", metadata: metadata, composite: Self.composite)
            }
            #expect(error?.status == 403)
            let leftovers = try await temporaryObjects(service)
            #expect(leftovers.isEmpty)
            await #expect(throws: APIError.self) { try await service.execute(Storage.Objects.get(bucket: "pcu", object: "never.bin")) }
        }
    }

    @Test func belowTheThresholdOrNotOptedInItIsOneUpload() async throws {
        let file = try PatternFile(size: 600_000, name: "pcu-small")
        defer { file.remove() }
        try await withStorage { service, _ in
            var metadata = GoogleStorage.Object()
            metadata.name = "small.bin"
            let small = try await service.uploadObject(from: file.url, bucket: "pcu", metadata: metadata, composite: Self.composite)
            #expect(small.md5Hash != nil) // not composite: it has an MD5
            metadata.name = "plain.bin"
            _ = try await service.uploadObject(from: file.url, bucket: "pcu", metadata: metadata)
            #expect(try await temporaryObjects(service).isEmpty)
        }
        #expect(Self.composite.ranges(size: 5 << 20)?.count == 5)
        #expect(ParallelCompositeUpload().ranges(size: 100 << 20) == nil)
        #expect(ParallelCompositeUpload(threshold: 1, maximumParts: 100, minimumPartSize: 1).ranges(size: 1000)?.count == 32) // compose's limit
    }

    /// The method is public: sizes at Int64's end split without overflowing (it trapped in
    /// `size + count - 1` before).
    @Test func sizesAtInt64sEndSplitWithoutOverflow() throws {
        for size in [Int64.max, Int64.max - 1, Int64.max - 31] {
            let ranges = try #require(ParallelCompositeUpload().ranges(size: size))
            #expect(ranges.count == 32)
            #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == size)
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound && !$0.isEmpty })
        }
        #expect(ParallelCompositeUpload(threshold: -10, maximumParts: -1, minimumPartSize: -5).ranges(size: -1) == nil)
    }
}
