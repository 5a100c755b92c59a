@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

/// Checksums the server verifies: every upload protocol sends the media's MD5 and CRC32C with the
/// request that completes it (`X-Goog-Hash`), and the test server, as Cloud Storage, refuses
/// bytes that disagree. `corrupt=N` flips byte N on arrival, as a bad link would.
@Suite struct UploadIntegrityTests {
    @Test(arguments: [UploadParameters.UploadProtocol.resumable, .multipart, .media])
    func aByteCorruptedOnTheWayIsRefusedAndNothingIsStored(_ uploadProtocol: UploadParameters.UploadProtocol) async throws {
        let file = try PatternFile(size: 700_000)
        defer { file.remove() }
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-integrity-\(UUID()).json")
                var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream", uploadProtocol: uploadProtocol)
                parameters.chunkSize = 256 << 10
                if uploadProtocol == .resumable { parameters.sessionFile = sessionFile }
                let name = "corrupt-\(uploadProtocol).bin"
                let error = await #expect(throws: IntegrityError.self) {
                    _ = try await service.execute(Files.insert(server, name: name, upload: parameters, faults: ["corrupt": "300000"]))
                }
                #expect(error?.message.contains("doesn't match calculated") == true)
                #expect(server.files.contents(named: name) == nil) // refused by the server, not found afterwards
                #expect(!FileManager.default.fileExists(atPath: sessionFile.path))
            }
        }
    }

    @Test func aCorruptedStreamIsRefusedToo() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let stream = AsyncStream<Data> { continuation in
                    continuation.yield(Data(TestPattern.bytes(count: 600_000)))
                    continuation.finish()
                }
                var parameters = UploadParameters(stream: UploadStream(stream), mimeType: "application/octet-stream")
                parameters.chunkSize = 256 << 10
                await #expect(throws: IntegrityError.self) {
                    _ = try await service.execute(Files.insert(server, name: "corrupt-stream.bin", upload: parameters, faults: ["corrupt": "10"]))
                }
                #expect(server.files.contents(named: "corrupt-stream.bin") == nil)
            }
        }
    }

    @Test func withoutVerificationNoChecksumIsSentAndTheServerKeepsWhatArrived() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                var parameters = UploadParameters(data: Data(TestPattern.bytes(count: 300_000)), mimeType: "application/octet-stream")
                parameters.verifyIntegrity = false
                let object = try await service.execute(Files.insert(server, name: "unchecked.bin", upload: parameters,
                                                                    faults: ["corrupt": "5"]))
                #expect(object.json["size"] == "300000")
                #expect(server.files.contents(named: "unchecked.bin") != Data(TestPattern.bytes(count: 300_000)))
            }
        }
    }

    @Test func checksumsGoInTheHeaderAndInCloudStorageMetadata() throws {
        let checksums = Checksums(md5: Data(repeating: 1, count: 16), crc32c: 0x0102_0304, byteCount: 5)
        #expect(checksums.googHash == "crc32c=AQIDBA==,md5=AQEBAQEBAQEBAQEBAQEBAQ==")
        let storage = APIDescription(name: "storage", version: "v1", rootURL: URL(string: "https://x")!, servicePath: "storage/v1/")
        let tasks = APIDescription(name: "tasks", version: "v1", rootURL: URL(string: "https://x")!, servicePath: "tasks/v1/")
        let metadata = JSONValue.object(["name": "a"])
        let withSums = ServiceActor.addingChecksums(checksums, to: metadata, api: storage)
        #expect(withSums["crc32c"] == "AQIDBA==" && withSums["md5Hash"] == "AQEBAQEBAQEBAQEBAQEBAQ==")
        #expect(ServiceActor.addingChecksums(checksums, to: metadata, api: tasks) == metadata)
    }

    // The hashing of the source runs beside the upload; it must end with it. A large file's used
    // to go on for seconds after the upload failed, reading the file and holding it open.

    /// A sparse file of `size` bytes (no disk used), its name carrying `marker`.
    private static func sparseFile(_ marker: String, size: Int64) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(marker).bin")
        #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
        #expect(truncate(url.path, off_t(size)) == 0)
        return url
    }

    @Test func aFailedUploadHasStoppedHashingItsFileWhenItReturns() async throws {
        let marker = "courier-hash-stop-\(UUID())"
        let file = try Self.sparseFile(marker, size: 1 << 30) // seconds of MD5: far longer than the refusal
        defer { try? FileManager.default.removeItem(at: file) }
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                var query = Files.insert(server, name: "refused.bin", upload: UploadParameters(file: file, mimeType: "application/octet-stream"))
                query.uploadPath = "/upload/nowhere/v1/files" // 404 at the session's start
                await #expect(throws: (any Error).self) { _ = try await service.execute(query) }
                #expect(openDescriptors(connectedTo: [], fileMarker: marker) == [])
            }
        }
    }

    @Test func hashingAFileStopsWhenItsTaskIsCancelled() async throws {
        let marker = "courier-hash-cancel-\(UUID())"
        let file = try Self.sparseFile(marker, size: 1 << 30)
        defer { try? FileManager.default.removeItem(at: file) }
        let direct = Task { () throws -> Checksums in
            withUnsafeCurrentTask { $0?.cancel() }
            return try Checksums.of(file: file)
        }
        await #expect(throws: CancellationError.self) { _ = try await direct.value }
        // Awaited from a cancelled task, the background hashing of an upload's source is cancelled too.
        let awaited = Task { () throws -> Checksums in
            let checksums = SourceChecksums(.file(file), count: 1 << 30)
            withUnsafeCurrentTask { $0?.cancel() }
            return try await checksums.result
        }
        await #expect(throws: CancellationError.self) { _ = try await awaited.value }
        #expect(openDescriptors(connectedTo: [], fileMarker: marker) == [])
    }
}
