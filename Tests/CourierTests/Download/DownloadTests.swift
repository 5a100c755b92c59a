@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import Glibc
import Subprocess
import Synchronization
import CourierTestSupport
import Testing

@Suite struct DownloadTests {
    func withStoredFile<T>(size: Int, _ body: (TestServer, ServiceActor, String, Data) async throws -> T) async throws -> T {
        try await withTestServer { server in
            let contents = Data(TestPattern.bytes(count: size))
            try server.files.store(name: "download.bin", contents: contents)
            return try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let listing = try await service.send(HTTPRequest(url: server.url("/files/v1/files/file-1")))
                #expect(listing.status == 200)
                return try await body(server, service, "file-1", contents)
            }
        }
    }

    @Test func mediaToAFileWithProgressAndIntegrity() async throws {
        try await withStoredFile(size: 3_000_000) { server, service, id, contents in
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            let seen = LockedValue<[Int64]>([])
            let result = try await service.downloadFile(Files.media(server, id: id), to: target, options: DownloadOptions(progress: { progress in
                seen.withLock { $0.append(progress.bytesWritten) }
            }))
            #expect(try Data(contentsOf: target) == contents)
            #expect(result.bytes == 3_000_000)
            #expect(result.resumedFrom == 0)
            #expect(seen.withLock { $0.last } == 3_000_000)
            #expect(!FileManager.default.fileExists(atPath: PartialDownload.sidecar(for: target).path))
        }
    }

    @Test func aPartialFileResumesWithRange() async throws {
        try await withStoredFile(size: 3_000_000) { server, service, id, contents in
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            // A first run that stopped after 1,000,000 bytes (a crash, a cancelled task).
            let partial = try await service.stream(HTTPRequest(url: URL(string: "\(server.baseURL)/download/files/v1/files/\(id)?alt=media")!))
            try contents.prefix(1_000_000).write(to: PartialDownload.dataFile(for: target))
            let marker = PartialDownload(url: URL(string: "\(server.baseURL)/download/files/v1/files/\(id)?alt=media&prettyPrint=false")!.absoluteString,
                                         etag: partial.headers["ETag"], lastModified: nil, totalBytes: 3_000_000)
            try JSONEncoder().encode(marker).write(to: PartialDownload.sidecar(for: target))
            let result = try await service.downloadFile(Files.media(server, id: id), to: target)
            #expect(result.resumedFrom == 1_000_000)
            #expect(try Data(contentsOf: target) == contents)
        }
    }

    @Test func aChangedObjectIsDownloadedWholeAgain() async throws {
        try await withStoredFile(size: 500_000) { server, service, id, contents in
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            try Data(repeating: 7, count: 200_000).write(to: PartialDownload.dataFile(for: target))
            let marker = PartialDownload(url: URL(string: "\(server.baseURL)/download/files/v1/files/\(id)?alt=media&prettyPrint=false")!.absoluteString,
                                         etag: "\"an-old-version\"", lastModified: nil, totalBytes: 500_000)
            try JSONEncoder().encode(marker).write(to: PartialDownload.sidecar(for: target))
            let result = try await service.downloadFile(Files.media(server, id: id), to: target)
            #expect(result.resumedFrom == 0) // If-Range did not match: the server sent it all
            #expect(try Data(contentsOf: target) == contents)
        }
    }

    @Test func corruptLocalBytesFailTheIntegrityCheck() async throws {
        try await withStoredFile(size: 500_000) { server, service, id, _ in
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            let etag = try await service.stream(HTTPRequest(url: URL(string: "\(server.baseURL)/download/files/v1/files/\(id)?alt=media")!)).headers["ETag"]
            try Data(repeating: 7, count: 200_000).write(to: PartialDownload.dataFile(for: target)) // wrong bytes, right ETag
            try Data("the previous version".utf8).write(to: target)
            let marker = PartialDownload(url: URL(string: "\(server.baseURL)/download/files/v1/files/\(id)?alt=media&prettyPrint=false")!.absoluteString,
                                         etag: etag, lastModified: nil, totalBytes: 500_000)
            try JSONEncoder().encode(marker).write(to: PartialDownload.sidecar(for: target))
            await #expect(throws: IntegrityError.self) { try await service.downloadFile(Files.media(server, id: id), to: target) }
            // Nothing corrupt is kept: the file under its name is untouched, the bad data is gone.
            #expect(try Data(contentsOf: target) == Data("the previous version".utf8))
            #expect(!FileManager.default.fileExists(atPath: PartialDownload.dataFile(for: target).path))
        }
    }

    /// Media into memory is checked against `x-goog-hash` as a file is. Before, a byte flipped on
    /// the way came back as the object's content.
    @Test func mediaIntoMemoryIsVerifiedToo() async throws {
        try await withStoredFile(size: 300_000) { server, service, id, contents in
            let whole = try await service.execute(Files.media(server, id: id))
            #expect(whole.data == contents)
            var corrupted = Files.media(server, id: id)
            corrupted.parameters.set("corrupt", "1000")
            let error = await #expect(throws: IntegrityError.self) { try await service.execute(corrupted) }
            #expect(error?.message.hasPrefix("crc32c") == true, "CRC32C alone, when the header has it")
        }
    }

    @Test func toMemoryOnlyUnderALimit() async throws {
        try await withStoredFile(size: 2_000_000) { server, service, id, contents in
            let media = try await service.execute(Files.media(server, id: id))
            #expect(media.data == contents)
        }
        try await withTestServer { server in
            try server.files.store(name: "big", contents: Data(count: 2_000_000))
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.transport.maxResponseBodySize = 1_000_000
            try await withCheckedService(configuration: configuration) { service in
                await #expect(throws: TransportError.bodyTooLarge) { try await service.execute(Files.media(server, id: "file-1")) }
            }
        }
    }
}
