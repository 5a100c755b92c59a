import Courier
import Foundation
import Glibc
import CourierTestSupport
import Testing

/// HTTPS against nginx (Debian's), with a CA and a server certificate made by OpenSSL at test
/// time: verification, CA bundles, hostname checks, and HTTP/2 over ALPN, counted by nginx.
@Suite(.serialized) struct TLSTests {
    @Test func selfSignedIsRejectedByDefaultAndAcceptedWithItsCA() async throws {
        try await withNginxTLS { peer in
            try await withCheckedService(configuration: .suite()) { service in
                let error = await #expect(throws: TransportError.self) {
                    try await service.send(HTTPRequest(url: peer.url(host: "localhost", path: "/ok")))
                }
                #expect(error == .tlsFailure)
            }
            var configuration = ServiceActor.Configuration.suite()
            configuration.transport.tls = TLSConfiguration(caBundlePath: peer.caPath)
            try await withCheckedService(configuration: configuration) { service in
                let response = try await service.send(HTTPRequest(url: peer.url(host: "localhost", path: "/ok")))
                #expect(response.status == 200)
                #expect(String(decoding: response.body, as: UTF8.self) == "ok")
            }
        }
    }

    @Test func aHostnameMismatchIsRejected() async throws {
        try await withNginxTLS { peer in
            var configuration = ServiceActor.Configuration.suite()
            configuration.transport.tls = TLSConfiguration(caBundlePath: peer.caPath)
            try await withCheckedService(configuration: configuration) { service in
                // The certificate names localhost only, not the address.
                let error = await #expect(throws: TransportError.self) {
                    try await service.send(HTTPRequest(url: peer.url(host: "127.0.0.1", path: "/ok")))
                }
                #expect(error == .tlsFailure)
            }
        }
    }

    @Test func http2StreamsShareOneConnection() async throws {
        try await withNginxTLS { peer in
            var configuration = ServiceActor.Configuration.suite()
            configuration.transport.tls = TLSConfiguration(caBundlePath: peer.caPath)
            configuration.transport.httpVersion = .http2
            configuration.limits.connections.maxConnectionsPerHost = 1
            configuration.limits.connections.maxConcurrentTransfersPerHost = 100
            try await withCheckedService(configuration: configuration) { service in
                let url = peer.url(host: "localhost", path: "/ok")
                _ = try await service.send(HTTPRequest(url: url)) // the connection, negotiated by ALPN
                try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                    for _ in 0..<60 { group.addTask { try await service.send(HTTPRequest(url: url)) } }
                    for try await response in group {
                        #expect(response.status == 200)
                        #expect(response.head.version == .http2)
                    }
                }
            }
            let lines = try peer.accessLog().filter { $0.hasSuffix("/ok") }
            #expect(lines.count == 61)
            let connections = Set(lines.map { $0.split(separator: " ")[0] })
            #expect(connections.count == 1, "requests spread over \(connections.count) connections")
            #expect(lines.allSatisfy { $0.contains("HTTP/2.0") })
        }
    }

    /// Every new connection after the first offers the service's last TLS session, whichever
    /// easy handle makes it: on libcurl 7.84.0 to 8.0.1 each transfer has a new handle, whose
    /// own cache would be empty (``TLSSessionCache``).
    @Test func newConnectionsResumeTheServicesTLSSession() async throws {
        try await withNginxTLS { peer in
            var configuration = ServiceActor.Configuration.suite()
            configuration.transport.tls = TLSConfiguration(caBundlePath: peer.caPath)
            configuration.transport.httpVersion = .http1_1
            try await withCheckedService(configuration: configuration) { service in
                let url = peer.url(host: "localhost", path: "/close")
                for _ in 0..<4 { // one after another: each closes its connection
                    #expect(try await service.send(HTTPRequest(url: url)).status == 200)
                }
                try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                    for _ in 0..<6 { group.addTask { try await service.send(HTTPRequest(url: url)) } }
                    for try await response in group { #expect(response.status == 200) }
                }
            }
            let lines = try peer.accessLog().filter { $0.hasSuffix("/close") }
            #expect(lines.count == 10)
            #expect(Set(lines.map { $0.split(separator: " ")[0] }).count == 10, "each request on a connection of its own")
            let resumed = lines.map { $0.split(separator: " ")[3] == "r" }
            #expect(resumed.first == false, "the first connection has no session to resume")
            #expect(resumed.dropFirst().allSatisfy { $0 }, "full handshakes after the first: \(lines)")
        }
    }
}

/// nginx serving `/ok`, and `/close`, which closes its connection, over TLS (HTTP/1.1 and HTTP/2)
/// on 127.0.0.1, for one test.
struct NginxTLS: Sendable {
    let port: Int
    let directory: URL
    var caPath: String { directory.appendingPathComponent("ca.pem").path }

    func url(host: String, path: String) -> URL { URL(string: "https://\(host):\(port)\(path)")! }

    /// `connection requests protocol reused path`, one line per request; `reused` is `r` when
    /// the connection resumed a TLS session, `.` after a full handshake.
    func accessLog() throws -> [String] {
        try String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
    }
}

/// - Parameter upstream: Where `/gdch/` is proxied (the test server), for credentials whose
///   token endpoint is https with its own CA.
func withNginxTLS<T: Sendable>(proxying upstream: URL? = nil, _ body: (NginxTLS) async throws -> T) async throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    chmod(directory.path, 0o777) // nginx's worker may run as nobody
    defer { try? FileManager.default.removeItem(at: directory) }
    let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
    let path = { (name: String) in directory.appendingPathComponent(name).path }
    func run(_ arguments: [String]) async throws {
        let result = try await runProcess(openssl, arguments, timeout: 60)
        guard result.status == 0 else { throw NginxError.failed("openssl \(arguments.first ?? ""): \(result.error)") }
    }
    // P-256 keys: made in a millisecond, where an RSA-2048 pair costs 100 ms or more of CPU.
    let p256 = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    try await run(["req", "-x509"] + p256 + ["-nodes", "-days", "1", "-subj", "/CN=Courier Test CA",
                                              "-keyout", path("ca.key"), "-out", path("ca.pem")])
    try await run(["req"] + p256 + ["-nodes", "-subj", "/CN=localhost", "-keyout", path("server.key"), "-out", path("server.csr")])
    try Data("subjectAltName=DNS:localhost\n".utf8).write(to: URL(fileURLWithPath: path("san.ext")))
    try await run(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                   "-CAcreateserial", "-days", "1", "-extfile", path("san.ext"), "-out", path("server.pem")])
    let port = unusedPort()
    let configuration = """
        worker_processes 1;
        pid \(path("nginx.pid"));
        error_log \(path("error.log")) warn;
        events { worker_connections 256; }
        http {
            log_format counted '$connection $connection_requests $server_protocol $ssl_session_reused $uri';
            access_log \(path("access.log")) counted;
            client_body_temp_path \(path("body"));
            proxy_temp_path \(path("proxy"));
            fastcgi_temp_path \(path("fastcgi"));
            uwsgi_temp_path \(path("uwsgi"));
            scgi_temp_path \(path("scgi"));
            http2_max_concurrent_streams 128;
            server {
                listen 127.0.0.1:\(port) ssl http2;
                ssl_certificate \(path("server.pem"));
                ssl_certificate_key \(path("server.key"));
                ssl_session_cache shared:courier:1m;
                location /ok { return 200 'ok'; }
                location /close { keepalive_timeout 0; return 200 'closed'; }
                \(upstream.map { "location /gdch/ { proxy_pass \($0.absoluteString.hasSuffix("/") ? String($0.absoluteString.dropLast()) : $0.absoluteString); }" } ?? "")
            }
        }
        """
    try Data(configuration.utf8).write(to: URL(fileURLWithPath: path("nginx.conf")))
    return try await withChildProcess("/usr/sbin/nginx", ["-p", directory.path, "-c", path("nginx.conf"), "-g", "daemon off;"]) { pid in
        guard await waitForListener(port: port, while: pid) else {
            let log = (try? String(contentsOf: URL(fileURLWithPath: path("error.log")), encoding: .utf8)) ?? ""
            throw NginxError.failed("nginx did not start: \(log)")
        }
        return try await body(NginxTLS(port: port, directory: directory))
    }.value
}

enum NginxError: Error, CustomStringConvertible {
    case failed(String)
    var description: String {
        switch self { case .failed(let why): why }
    }
}
