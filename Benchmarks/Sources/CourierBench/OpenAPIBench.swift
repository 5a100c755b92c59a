import ArgumentParser
import AsyncHTTPClient
import Courier
import CourierOpenAPI
import Foundation
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import OpenAPINotes
import OpenAPIURLSession
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One generated client (Tests/OpenAPINotes, the tests' client) over three transports: CourierTransport,
/// swift-openapi-async-http-client and swift-openapi-urlsession.
struct OpenAPIBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "The same generated OpenAPI client over CourierTransport, AsyncHTTPClientTransport or URLSessionTransport.",
        discussion: """
            get: the 1 KB JSON GET (nginx's /data.json), decoded, at --concurrency in flight; prints the closed loop's line.
            stream: --bytes up as a streamed body, then down as one, against the test server; prints seconds and peak RSS.
            """
    )

    @Option(help: "The server URL.") var url: String
    @Option(help: "courier | ahc | urlsession") var transport = "courier"
    @Option(help: "get | stream") var mode = "get"
    @Option(name: .shortAndLong, help: "Requests in flight (get).") var concurrency = 64
    @Option(name: .shortAndLong, help: "Seconds to run after a 1 s warm-up (get).") var duration = 5.0
    @Option(help: "Bytes each way (stream).") var bytes = 64 << 20

    func run() async throws {
        guard let server = URL(string: url) else { throw ValidationError("bad --url") }
        switch transport {
        case "courier":
            var configuration = ServiceActor.Configuration()
            configuration.limits.connections.maxConnectionsPerHost = max(64, concurrency)
            configuration.limits.connections.maxConcurrentTransfersPerHost = max(100, concurrency)
            configuration.transport.automaticDecompression = false
            configuration.transport.httpVersion = .http1_1
            try await withService(configuration: configuration) { service in
                // Neither of the others retries or authorizes; this is the transport's default all the same.
                try await measure(Client(serverURL: server, transport: CourierTransport(service: service)))
            }
        case "ahc":
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .http1Only
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(64, concurrency))
            configuration.decompression = .disabled
            let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            do {
                try await measure(Client(serverURL: server, transport: AsyncHTTPClientTransport(configuration: .init(client: http))))
            } catch {
                try await http.shutdown()
                throw error
            }
            try await http.shutdown()
        case "urlsession":
            let session = URLSessionConfiguration.default
            session.httpMaximumConnectionsPerHost = max(64, concurrency)
            try await measure(Client(serverURL: server, transport: URLSessionTransport(configuration: .init(session: URLSession(configuration: session)))))
        default:
            throw ValidationError("--transport: courier, ahc or urlsession")
        }
    }

    func measure(_ client: Client) async throws {
        switch mode {
        case "get":
            try await ClosedLoop.measure(concurrency: concurrency, work: .seconds(duration)) {
                let sample = try await client.getSample().ok.body.json
                precondition(sample.items?.count == 20)
            }
        case "stream":
            _ = try await client.downloadBytes(path: .init(count: 1 << 20)).ok.body.binary.reduce(0) { $0 + $1.count } // warm
            let before = Usage.now()
            let chunk = ArraySlice([UInt8](repeating: 42, count: 256 << 10))
            let chunks = RepeatedChunk(chunk: chunk, count: bytes / chunk.count)
            let body = HTTPBody(chunks, length: .known(Int64(bytes)), iterationBehavior: .single)
            let received = try await client.uploadBytes(body: .binary(body)).ok.body.json
            precondition(received.bytes == Int64(bytes))
            let middle = Usage.now()
            var count = 0
            for try await piece in try await client.downloadBytes(path: .init(count: Int64(bytes))).ok.body.binary { count += piece.count }
            precondition(count == bytes)
            let after = Usage.now()
            print(String(format: "upload-s %.3f  download-s %.3f  cpu-s %.3f  peak-rss-MiB %.1f", middle.wall - before.wall,
                         after.wall - middle.wall, after.cpu - before.cpu, Double(Usage.peakRSSKiB()) / 1024))
        default:
            throw ValidationError("--mode: get or stream")
        }
    }
}

/// One chunk `count` times, made on demand: a streamed body that holds one chunk of memory.
struct RepeatedChunk: AsyncSequence, Sendable {
    let chunk: ArraySlice<UInt8>
    let count: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunk: ArraySlice<UInt8>
        var left: Int
        mutating func next() async -> ArraySlice<UInt8>? {
            guard left > 0 else { return nil }
            left -= 1
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunk: chunk, left: count) }
}
