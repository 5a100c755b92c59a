// Large bodies without holding them in memory: streaming both ways, and downloads to disk.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start() // stands in for your API

try await withService { service in
    // Stream a response: the head first, then chunks. A slow consumer pauses the transfer.
    let response = try await service.stream(HTTPRequest(url: server.url("/bytes/10000000")))
    var received = 0
    for try await chunk in response.body { received += chunk.count }
    print("streamed", received, "bytes with status", response.status)

    // Stream a request body from any AsyncSequence of Data (chunked when the length is unknown).
    let chunks = AsyncStream<Data> { continuation in
        for _ in 0..<10 { continuation.yield(Data(repeating: 42, count: 64 << 10)) }
        continuation.finish()
    }
    let upload = try await service.send(HTTPRequest(method: .post, url: server.url("/upload"), body: .stream(chunks)))
    print("server received", String(decoding: upload.body, as: UTF8.self))

    // Download straight to a file; an error status leaves the file alone.
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-snippet.bin")
    let download = try await service.send(HTTPRequest(url: server.url("/bytes/5000000")), writingBodyTo: file)
    print("downloaded", try FileManager.default.attributesOfItem(atPath: file.path)[.size] ?? 0, "bytes, status", download.status)

    // Upload that file, read from disk as it is sent.
    let put = try await service.send(HTTPRequest(method: .put, url: server.url("/upload"), body: .file(file)))
    print("uploaded", String(decoding: put.body, as: UTF8.self))
    try? FileManager.default.removeItem(at: file)
}
await server.stop()
