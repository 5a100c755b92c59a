import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// storage-testbench's `stall-for-Ns-after-NK`, as google-cloud-go's stall tests use it: a
/// download pauses after N KiB; an upload request that reaches N KiB waits before it is stored.
/// The idle timeout ends the wait: a download resumes where it stopped, a resumable upload asks
/// where the server is, a single-shot upload is sent again only with a precondition. These race
/// a 300 ms timeout against 2 s pauses, so they run with the timed tests, alone (`TIMED_TESTS`).
@Suite struct EmulatorStallTimingTests {
    // MARK: stall-for-Ns-after-NK

    @Test func aStalledDownloadResumesWhereItStopped() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-stall-\(UUID())")
        defer { try? FileManager.default.removeItem(at: file) }
        try await StorageTestbench.withEmulator { testbench, service in
            testbench.createObject(bucket: "b", name: "o", contents: EmulatorFaultTests.contents)
            let id = try await testbench.createRetryTest(["storage.objects.get": ["stall-for-2s-after-128K"]], service: service)
            var query = Storage.Objects.get(bucket: "b", object: "o").makeMediaQuery()
            query.headers["x-retry-test-id"] = id
            query.execution.timeouts = Timeouts(idle: .milliseconds(300))
            let started = ContinuousClock.now
            _ = try await service.downloadFile(query, to: file)
            #expect(try Data(contentsOf: file) == EmulatorFaultTests.contents)
            #expect(testbench.retryTests.isCompleted(id))
            let gets = testbench.headers(of: "storage.objects.get")
            #expect(gets.count == 2)
            #expect(gets.last?["range"] == "bytes=\(128 << 10)-", "the second request asks for the rest")
            #expect(ContinuousClock.now - started < .seconds(2), "the idle timeout ended the stall")
        }
    }

    @Test func aStalledResumableChunkIsAskedAboutAndSentAgain() async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            let id = try await testbench.createRetryTest(["storage.objects.insert": ["stall-for-2s-after-300K"]], service: service)
            var query = EmulatorFaultTests.insertQuery(try EmulatorFaultTests.parameters(.data, scratch: URL(fileURLWithPath: "/dev/null")), testID: id)
            query.execution.timeouts = Timeouts(idle: .milliseconds(300))
            let stored = try await service.execute(query)
            #expect(stored.size == UInt64(EmulatorFaultTests.contents.count))
            #expect(testbench.retryTests.isCompleted(id))
            #expect(EmulatorFaultTests.statusQueries(testbench) >= 1, "after the timeout the upload asked where the server was")
            #expect(testbench.contents(bucket: "b", name: "uploaded") == EmulatorFaultTests.contents)
        }
    }

    @Test(arguments: [true, false])
    func aStalledSingleShotUploadIsSentAgainOnlyWithAPrecondition(precondition: Bool) async throws {
        try await StorageTestbench.withEmulator { testbench, service in
            let id = try await testbench.createRetryTest(["storage.objects.insert": ["stall-for-2s-after-100K"]], service: service)
            let parameters = UploadParameters(data: EmulatorFaultTests.contents, mimeType: "application/octet-stream", uploadProtocol: .multipart)
            var query = EmulatorFaultTests.insertQuery(parameters, testID: id, precondition: precondition)
            query.execution.timeouts = Timeouts(idle: .milliseconds(300))
            if precondition {
                // Sent again: ifGenerationMatch=0 makes it safe. Whichever insert lands first wins;
                // if the stalled one did, the repeat is refused (412), and nothing is written twice.
                do {
                    let stored = try await service.execute(query)
                    #expect(stored.size == UInt64(EmulatorFaultTests.contents.count))
                } catch let error as APIError {
                    #expect(error.status == 412, "\(error)")
                }
                #expect(testbench.requests(to: "storage.objects.insert") == 2, "sent again")
                #expect(testbench.contents(bucket: "b", name: "uploaded") == EmulatorFaultTests.contents)
            } else {
                await #expect(throws: TransportError.timedOut) { try await service.execute(query) }
                #expect(testbench.requests(to: "storage.objects.insert") == 1, "a write that may have arrived is not sent again")
            }
            #expect(testbench.retryTests.isCompleted(id))
        }
    }
}
