import AsyncHTTPClient
import NIOCore
import NIOPosix
import NIOSSL

/// The same closed loop on AsyncHTTPClient (SwiftNIO), with as many connections per host.
enum AHCLoad {
    static func run(url: String, concurrency: Int, connections: Int, work: ClosedLoop.Work, insecure: Bool = false,
                    http2: Bool = false) async throws {
        var configuration = HTTPClient.Configuration()
        if insecure {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            configuration.tlsConfiguration = tls
        }
        configuration.httpVersion = http2 ? .automatic : .http1Only
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        configuration.decompression = .disabled
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        do {
            let request = HTTPClientRequest(url: url)
            try await ClosedLoop.measure(concurrency: concurrency, work: work) {
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 16 << 20)
                precondition(response.status == .ok && body.readableBytes > 0)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
