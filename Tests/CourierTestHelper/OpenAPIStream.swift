import Courier
import CourierOpenAPI
import CourierTestServer
import Foundation
import OpenAPINotes
import OpenAPIRuntime

/// `openapi-stream <baseURL> <bytes>`: the generated Notes client over CourierTransport sends
/// `bytes` as a streamed request body (made chunk by chunk on demand) and reads as many back as a
/// streamed response body; prints byte counts, hashes and the peak RSS of the two.
func openAPIStream(base: String, total: Int) async throws {
    var report = Report() // the file fields stay 0
    try await withService { service in
        let client = Client(serverURL: URL(string: base)!, transport: CourierTransport(service: service))
        _ = try await client.getNote(path: .init(id: "warm-up")) // connection and code paths warm
        report.baselineKiB = kilobytes("VmRSS:")
        resetPeak()

        let chunks = LazyChunks(total: total, chunkSize: 256 << 10).map { ArraySlice<UInt8>($0) }
        let body = HTTPBody(chunks, length: .known(Int64(total)), iterationBehavior: .single)
        let received = try await client.uploadBytes(body: .binary(body)).ok.body.json
        report.uploadedBytes = Int(received.bytes)
        report.uploadHash = received.hash

        let download = try await client.downloadBytes(path: .init(count: Int64(total))).ok.body.binary
        var hasher = TestPattern.Hasher()
        for try await chunk in download { hasher.update(chunk) }
        report.downloadedBytes = hasher.count
        report.downloadHash = hasher.hex
        report.peakKiB = kilobytes("VmHWM:")
    }
    print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
}
