import Courier
import CourierSync
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// An object replaced while it downloads. The JSON API honours no `If-Range` (it is not among
/// its preconditions, and storage-testbench ignores it), so a resumed range of a replaced object
/// is the new object's bytes. Google's libraries pin the generation of the first answer on every
/// later request (google-cloud-go's `readerReopen`); Courier does the same. Before, the file
/// joined the old object's first 256 KiB to the new one's rest: silently without verification,
/// and an `IntegrityError` with it.
@Suite struct DownloadGenerationTests {
    static let first = Data(TestPattern.bytes(count: 512 << 10))
    static let second = Data(first.reversed())

    /// Downloads `o` through a broken stream after 256 KiB; the retry's decision replaces the object
    /// first when `replace` is set.
    static func download(replace: Bool, options: DownloadOptions, file: URL) async throws -> (Result<DownloadResult, any Error>, [[String: String]]) {
        let replaced = LockedValue(false)
        let testbench = LockedValue<StorageTestbench?>(nil)
        return try await StorageTestbench.withEmulator(configure: { configuration in
            configuration.retry.shouldRetry = { _ in
                if replace, !replaced.withLock({ let was = $0; $0 = true; return was }) {
                    testbench.withLock { $0 }?.createObject(bucket: "b", name: "o", contents: second)
                }
                return nil
            }
        }) { emulator, service in
            testbench.withLock { $0 = emulator }
            emulator.createObject(bucket: "b", name: "o", contents: first)
            // Sliced, the first answer may use up one break (its body is dropped after the head);
            // the second then breaks a slice.
            let breaks = options.slicing == nil ? ["return-broken-stream-after-256K"] : Array(repeating: "return-broken-stream-after-128K", count: 2)
            var query = Storage.Objects.get(bucket: "b", object: "o").makeMediaQuery()
            query.headers["x-retry-test-id"] = try await emulator.createRetryTest(["storage.objects.get": breaks], service: service)
            let outcome: Result<DownloadResult, any Error>
            do {
                outcome = .success(try await service.downloadFile(query, to: file, options: options))
            } catch {
                outcome = .failure(error)
            }
            return (outcome, emulator.headers(of: "storage.objects.get"))
        }
    }

    static func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-generation-\(UUID())")
    }

    static func clean(_ file: URL) {
        for url in [file, file.appendingPathExtension("courier-download"), file.appendingPathExtension("courier-partial")] {
            try? FileManager.default.removeItem(at: url)
        }
    }

    @Test func aResumedRangeAsksForTheGenerationItBeganWith() async throws {
        let file = Self.scratch()
        defer { Self.clean(file) }
        let (outcome, gets) = try await Self.download(replace: false, options: DownloadOptions(slicing: nil), file: file)
        _ = try outcome.get()
        #expect(try Data(contentsOf: file) == Self.first)
        #expect(gets.count == 2)
    }

    @Test(arguments: [false, true])
    func anObjectReplacedMidwayIsNeverJoined(verifyIntegrity: Bool) async throws {
        let file = Self.scratch()
        defer { Self.clean(file) }
        let (outcome, _) = try await Self.download(replace: true, options: DownloadOptions(verifyIntegrity: verifyIntegrity, slicing: nil), file: file)
        guard case .failure(let error) = outcome else {
            let bytes = try Data(contentsOf: file)
            Issue.record("the download succeeded with \(bytes == Self.first ? "the first object" : bytes == Self.second ? "the second object" : "a mix of both objects")")
            return
        }
        let transport = try #require(error as? TransportError, "\(error)")
        #expect(transport == TransportError.protocolError)
        #expect(transport.message.contains("changed while it downloaded"))
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(!FileManager.default.fileExists(atPath: file.appendingPathExtension("courier-download").path), "the partial data is gone")
    }

    @Test func aSlicedDownloadOfAnObjectReplacedMidwayFails() async throws {
        let file = Self.scratch()
        defer { Self.clean(file) }
        let slicing = SlicedDownloads(threshold: 1, maximumSlices: 2, minimumSliceSize: 256 << 10)
        let (outcome, gets) = try await Self.download(replace: true, options: DownloadOptions(verifyIntegrity: false, slicing: slicing), file: file)
        guard case .failure(let error) = outcome else {
            Issue.record("the sliced download succeeded")
            return
        }
        #expect((error as? TransportError) == TransportError.protocolError, "\(error)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(gets.count >= 3, "the first answer, then slices")
    }
}
