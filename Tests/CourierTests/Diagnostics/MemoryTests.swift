import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// Large bodies both ways with memory that stays flat, measured in a separate process so the
/// in-process test server's memory does not count.
@Suite struct MemoryTests {
    struct Report: Decodable {
        var uploadedBytes: Int
        var uploadHash: String
        var downloadedBytes: Int
        var downloadHash: String
        var fileUploadBytes: Int
        var fileDownloadBytes: Int
        var baselineKiB: Int
        var peakKiB: Int
    }

    @Test func hundredMegabytesStreamedBothWaysKeepsMemoryFlat() async throws {
        let total = 100 << 20
        try await withTestServer { server in
            let helper = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("CourierTestHelper")
            let run = try await runProcess(helper, ["stream-both", server.baseURL.absoluteString, "\(total)"])
            #expect(run.status == 0, "\(run.error)")
            let report = try JSONDecoder().decode(Report.self, from: run.output)

            var expected = TestPattern.Hasher()
            for offset in stride(from: 0, to: total, by: 1 << 20) {
                expected.update(TestPattern.bytes(count: 1 << 20, offset: offset))
            }
            #expect(report.uploadedBytes == total)
            #expect(report.uploadHash == expected.hex)
            #expect(report.downloadedBytes == total)
            #expect(report.downloadHash == expected.hex)
            #expect(report.fileDownloadBytes == total)
            #expect(report.fileUploadBytes == total)
            // 400 MB moved; the helper's peak may rise by a few buffers, never by the body.
            let growthMiB = Double(report.peakKiB - report.baselineKiB) / 1024
            print("memory: baseline \(report.baselineKiB / 1024) MiB, peak \(report.peakKiB / 1024) MiB while moving 4 x \(total >> 20) MiB")
            #expect(growthMiB < 24, "peak RSS grew by \(growthMiB) MiB over a \(report.baselineKiB / 1024) MiB baseline")
        }
    }
}
