@testable import Courier
import CourierTestServer
import CourierSync
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

/// Large objects as concurrent Range slices into one file, verified by combining the slices'
/// CRC32Cs; a slice that breaks resumes alone; corrupted bytes never reach the file's name.
@Suite struct SlicedDownloadTests {
    static let slicing = SlicedDownloads(threshold: 1 << 20, maximumSlices: 4, minimumSliceSize: 256 << 10)
    static let size = 3_000_001

    /// A stored pattern file and a service; `body` gets the media query (with `faults` as parameters) and a target path.
    func withObject(faults: [String: String] = [:], retry: Bool = true,
                    _ body: (TestServer, ServiceActor, Query<MediaData>, URL, Data) async throws -> Void) async throws {
        try await withTestServer { server in
            let contents = Data(TestPattern.bytes(count: Self.size))
            try server.files.store(name: "big.bin", contents: contents)
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: VirtualClock())
            configuration.retry = RetryPolicy(initialDelay: 1...1)
            try await withCheckedService(configuration: configuration) { service in
                var media = Files.media(server, id: "file-1")
                for (key, value) in faults.sorted(by: { $0.key < $1.key }) { media.parameters.set(key, value) }
                let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-sliced-\(UUID())")
                defer {
                    try? FileManager.default.removeItem(at: target)
                    PartialDownload.remove(for: target)
                }
                try await body(server, service, media, target, contents)
            }
        }
    }

    @Test func aLargeObjectArrivesInFourSlicesAndIsVerified() async throws {
        try await withObject { _, service, media, target, contents in
            let seen = LockedValue<Int64>(0)
            let result = try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: Self.slicing, progress: { progress in
                seen.withLock { $0 = max($0, progress.bytesWritten) }
            }))
            #expect(result.slices == 4)
            #expect(result.bytes == Int64(Self.size) && result.resumedFrom == 0)
            #expect(try Data(contentsOf: target) == contents)
            #expect(seen.withLock { $0 } == Int64(Self.size))
            #expect(!FileManager.default.fileExists(atPath: PartialDownload.dataFile(for: target).path))
            #expect(!FileManager.default.fileExists(atPath: PartialDownload.sidecar(for: target).path))
        }
    }

    @Test func belowTheThresholdOrWithoutSlicingItIsOneStream() async throws {
        try await withObject { _, service, media, target, contents in
            let one = try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: nil))
            #expect(one.slices == 1)
            #expect(try Data(contentsOf: target) == contents)
            let high = try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: SlicedDownloads(threshold: 1 << 30)))
            #expect(high.slices == 1)
        }
        #expect(SlicedDownloads().ranges(total: 100 << 20) == nil)
        #expect(SlicedDownloads().ranges(total: 1 << 30)?.count == 4)
        #expect(SlicedDownloads(threshold: 1).ranges(total: 40 << 20) == nil) // one minimum slice: one stream
        #expect(Self.slicing.ranges(total: 2_000_001)?.map(\.count) == [500_001, 500_001, 500_001, 499_998])
    }

    /// Sizes a server gives: near Int64.max the slices' rounding and the total of a resumed
    /// part's offset and its length overflowed (traps); negative sizes are no size.
    @Test func sizesNearInt64MaxOrNegativeDoNotTrap() throws {
        let ranges = try #require(SlicedDownloads().ranges(total: .max))
        #expect(ranges.count == 4)
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == .max)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        func total(_ headers: HTTPHeaders, start: Int64) -> Int64? { DownloadTransmission.totalBytes(headers, start: start) }
        #expect(total(["Content-Length": "9223372036854775807"], start: 100) == nil)
        #expect(total(["Content-Length": "-5"], start: 0) == nil)
        #expect(total(["Content-Range": "bytes 0-1/-5"], start: 0) == nil)
        #expect(total(["Content-Range": "bytes 10-19/*", "Content-Length": "10"], start: 10) == 20)
        #expect(total(["Content-Range": "bytes 10-19/300"], start: 10) == 300)
        #expect(total([:], start: 0) == nil)
    }

    /// A damaged record beside a partial download (its offsets are added and ranged over when
    /// resuming: a written count of Int64.max overflowed) starts the download afresh.
    @Test func aDamagedRecordIsNotResumedFrom() {
        typealias Slice = PartialDownload.Slice
        func record(_ total: Int64?, _ slices: [Slice]?) -> PartialDownload {
            PartialDownload(url: "http://a/", etag: "e", lastModified: nil, totalBytes: total, slices: slices)
        }
        #expect(record(100, nil).isConsistent)
        #expect(record(nil, nil).isConsistent)
        #expect(record(100, [Slice(start: 0, end: 50, written: 50), Slice(start: 50, end: 100, written: 0)]).isConsistent)
        #expect(!record(-1, nil).isConsistent)
        #expect(!record(nil, [Slice(start: 0, end: 50, written: 0)]).isConsistent)
        #expect(!record(100, [Slice(start: 0, end: 50, written: .max), Slice(start: 50, end: 100, written: 0)]).isConsistent)
        #expect(!record(100, [Slice(start: 0, end: 50, written: -1), Slice(start: 50, end: 100, written: 0)]).isConsistent)
        #expect(!record(100, [Slice(start: 0, end: 60, written: 0), Slice(start: 50, end: 100, written: 0)]).isConsistent)
        #expect(!record(100, [Slice(start: 0, end: .min, written: 0), Slice(start: .min, end: 100, written: 0)]).isConsistent)
        #expect(!record(.max, [Slice(start: 5, end: .max, written: 0)]).isConsistent)
    }

    @Test func aSliceResetMidwayResumesAloneAndTheWholeVerifies() async throws {
        // The connection carrying byte 1,000,000 (the second slice) drops there, once.
        try await withObject(faults: ["break": "1000000"]) { server, service, media, target, contents in
            let result = try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: Self.slicing))
            #expect(server.files.brokenDownloadCount == 1)
            #expect(result.slices == 4)
            #expect(try Data(contentsOf: target) == contents)
        }
    }

    @Test func aCorruptedByteFailsTheCombinedCRCAndLeavesNothing() async throws {
        try await withObject(faults: ["corrupt": "2200000"]) { _, service, media, target, _ in
            let error = await #expect(throws: IntegrityError.self) {
                try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: Self.slicing))
            }
            #expect(error?.message.hasPrefix("crc32c") == true)
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(!FileManager.default.fileExists(atPath: PartialDownload.dataFile(for: target).path))
            #expect(!FileManager.default.fileExists(atPath: PartialDownload.sidecar(for: target).path))
        }
    }

    @Test func aCorruptedByteInOneStreamFailsToo() async throws {
        try await withObject(faults: ["corrupt": "10"]) { _, service, media, target, _ in
            await #expect(throws: IntegrityError.self) {
                try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: nil))
            }
            #expect(!FileManager.default.fileExists(atPath: target.path))
            #expect(!FileManager.default.fileExists(atPath: PartialDownload.dataFile(for: target).path))
        }
    }

    @Test func aSlicedDownloadLeftByAnotherProcessResumesEachSlice() async throws {
        try await withObject { server, service, media, target, contents in
            let url = try RequestBuilder.build(media, configuration: service.configuration).url
            let head = try await service.stream(HTTPRequest(url: url))
            let ranges = try #require(Self.slicing.ranges(total: Int64(Self.size)))
            // Each slice got part-way (the last not at all); the data file holds those bytes.
            let written: [Int64] = [100_000, 750_001, 3, 0]
            var data = Data(count: Self.size)
            for (range, count) in zip(ranges, written) {
                data.replaceSubrange(Int(range.lowerBound)..<Int(range.lowerBound + count), with: contents[Int(range.lowerBound)..<Int(range.lowerBound + count)])
            }
            try data.write(to: PartialDownload.dataFile(for: target))
            let record = PartialDownload(url: url.absoluteString, etag: head.headers["ETag"], lastModified: nil, totalBytes: Int64(Self.size),
                                         googHash: head.headers["x-goog-hash"],
                                         slices: zip(ranges, written).map { .init(start: $0.lowerBound, end: $0.upperBound, written: $1) })
            try record.write(for: target)
            let result = try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: Self.slicing))
            #expect(result.resumedFrom == written.reduce(0, +))
            #expect(result.slices == 4)
            #expect(try Data(contentsOf: target) == contents)
        }
    }

    @Test func anObjectThatChangedSinceTheSlicesBeganFailsThePrecondition() async throws {
        try await withObject { _, service, media, target, _ in
            let url = try RequestBuilder.build(media, configuration: service.configuration).url
            try Data(count: Self.size).write(to: PartialDownload.dataFile(for: target))
            let ranges = try #require(Self.slicing.ranges(total: Int64(Self.size)))
            let record = PartialDownload(url: url.absoluteString, etag: "\"an-older-generation\"", lastModified: nil,
                                         totalBytes: Int64(Self.size), slices: ranges.map { .init(start: $0.lowerBound, end: $0.upperBound, written: 0) })
            try record.write(for: target)
            let error = await #expect(throws: APIError.self) {
                try await service.downloadFile(media, to: target, options: DownloadOptions(slicing: Self.slicing))
            }
            #expect(error?.status == 412)
            #expect(!FileManager.default.fileExists(atPath: target.path))
        }
    }
}
