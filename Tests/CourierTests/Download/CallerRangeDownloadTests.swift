@testable import Courier
import CourierTestServer
import CourierTesting
import CourierTestSupport
import Foundation
import Testing

/// `downloadFile` sets `Range` and `If-Range` itself (resumption, slices). A caller's own was
/// taken for a resumption: `bytes=5-` failed with "cannot write", `bytes=100-199` and `bytes=0-`
/// with an APIError 206 whose message held the object's bytes. Now it is refused before any
/// request, and the file is untouched.
@Suite struct CallerRangeDownloadTests {
    @Test(arguments: [("Range", "bytes=5-"), ("Range", "bytes=100-199"), ("Range", "bytes=-500"), ("Range", "bytes=0-"), ("If-Range", "\"etag\"")])
    func aCallersRangeIsRefusedBeforeAnyRequest(header: String, value: String) async throws {
        try await withTestServer { server in
            try server.files.store(name: "download.bin", contents: Data(TestPattern.bytes(count: 3000)))
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-range-\(UUID())")
                defer { try? FileManager.default.removeItem(at: target) }
                var request = HTTPRequest(url: try #require(URL(string: "\(server.baseURL)/download/files/v1/files/file-1?alt=media")))
                request.headers[header] = value
                let before = server.counters.requests
                await #expect(throws: TransportError.invalidRequest) { try await service.downloadFile(request, to: target) }
                var query = Files.media(server, id: "file-1")
                query.headers[header] = value
                await #expect(throws: TransportError.invalidRequest) { try await service.downloadFile(query, to: target) }
                #expect(server.counters.requests == before)
                #expect(!FileManager.default.fileExists(atPath: target.path))
                #expect(!FileManager.default.fileExists(atPath: PartialDownload.dataFile(for: target).path))
            }
        }
    }
}
