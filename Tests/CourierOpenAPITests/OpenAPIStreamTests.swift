import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Streaming through CourierTransport with memory bounded. A heavy test (`make test` runs it
/// after the parallel suite, with UploadProcessTests): it moves half a gibibyte.
@Suite struct OpenAPIStreamTests {
    /// 256 MiB up as a streamed request body and 256 MiB down as a streamed response body, in a
    /// child process so the test server's memory does not count: the peak RSS rises by a few
    /// buffers, never by the body.
    @Test func twoHundredFiftySixMebibytesStreamEachWayWithMemoryBounded() async throws {
        let total = 256 << 20
        try await withTestServer { server in
            let helper = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("CourierTestHelper")
            let run = try await runProcess(helper, ["openapi-stream", server.baseURL.absoluteString, "\(total)"])
            #expect(run.status == 0, "\(run.error)")
            struct Report: Decodable {
                var uploadedBytes: Int, uploadHash: String, downloadedBytes: Int, downloadHash: String
                var baselineKiB: Int, peakKiB: Int
            }
            let report = try JSONDecoder().decode(Report.self, from: run.output)
            var expected = TestPattern.Hasher()
            for offset in stride(from: 0, to: total, by: 1 << 20) { expected.update(TestPattern.bytes(count: 1 << 20, offset: offset)) }
            #expect(report.uploadedBytes == total && report.uploadHash == expected.hex)
            #expect(report.downloadedBytes == total && report.downloadHash == expected.hex)
            let growthMiB = Double(report.peakKiB - report.baselineKiB) / 1024
            print("openapi-stream: baseline \(report.baselineKiB / 1024) MiB, peak \(report.peakKiB / 1024) MiB moving 2 x 256 MiB")
            #expect(growthMiB < 16, "peak RSS grew by \(growthMiB) MiB")
        }
    }
}
