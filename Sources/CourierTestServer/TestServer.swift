import CourierSync
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// An in-process HTTP server on 127.0.0.1 and an ephemeral port, for testing code that uses
/// Courier (or any HTTP client) without a network.
///
/// It serves httpbin-like routes (echo, status codes, delays, N-byte and chunked bodies, slow
/// drip, redirects), a Google-style Notes API (``NotesAPI``), an OAuth 2 token endpoint with
/// protected Notes routes (``TokenServer``) and the seeds' TicTacToe games on ``baseURL``, and wire-level faults that no well-behaved server produces
/// (a reset mid-body, stalled headers, a kept-alive connection closed under the client) on
/// ``faultURL``. ``counters`` shows what the server saw.
///
/// ```swift
/// try await withTestServer { server in
///     let response = try await service.send(HTTPRequest(url: server.url("/status/418")))
/// }
/// ```
public final class TestServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// `http://127.0.0.1:<port>` of the raw fault listener.
    public let faultURL: URL
    public let counters: TestServerCounters
    /// The Notes API's data, for seeding and inspection.
    public let notes: NotesAPI
    /// The OAuth 2 token endpoint (`/token`) and the tokens it issued.
    public let tokens: TokenServer
    /// The files API for uploads and downloads, and what it stored.
    public let files: FilesAPI
    /// A fake Compute Engine metadata server (set `GCE_METADATA_HOST` to ``metadataHost``).
    public let metadata: MetadataServerFake
    /// A fake Security Token Service (`/sts/v1/token`) and subject-token URL, for workload identity federation.
    public let sts: STSFake
    /// A fake IAM Credentials API (endpoint `url("/iam")`), for impersonation.
    public let iam: IAMCredentialsFake
    /// A fake of Google's Discovery service, for `courier generate <name>:<version> --discovery-root`.
    public let discovery: DiscoveryFake
    /// How many requests naming each fault reached the raw fault listener.
    public let faults: FaultCounts
    /// The `quota-N` fault's windows, per header value.
    public let quotas: QuotaLedger
    /// Gates that hold `GET /gate/{name}` until the test opens them.
    public let gates: TestServerGates
    private let lifecycle: ServerLifecycle
    private let application: RunningApplication
    private let faultServer: RawFaultServer

    private init(baseURL: URL, faultURL: URL, counters: TestServerCounters, notes: NotesAPI, tokens: TokenServer, files: FilesAPI,
                 metadata: MetadataServerFake, sts: STSFake, iam: IAMCredentialsFake, discovery: DiscoveryFake, faults: FaultCounts, quotas: QuotaLedger, gates: TestServerGates, lifecycle: ServerLifecycle, application: RunningApplication,
                 faultServer: RawFaultServer) {
        self.faults = faults
        self.discovery = discovery
        self.quotas = quotas
        self.gates = gates
        self.lifecycle = lifecycle
        self.baseURL = baseURL
        self.faultURL = faultURL
        self.counters = counters
        self.notes = notes
        self.tokens = tokens
        self.files = files
        self.metadata = metadata
        self.sts = sts
        self.iam = iam
        self.application = application
        self.faultServer = faultServer
    }

    /// Starts both listeners and returns once they accept connections.
    ///
    /// - Parameter port: The main listener's port on 127.0.0.1; 0 picks a free one.
    /// - Parameter configure: Adds routes of your own to the router before the server starts.
    /// - Parameter latency: Added to every request on the main listener, to stand in for a
    ///   network round trip (benchmarks of batching use it).
    ///
    /// - Parameter host: the address to listen on: loopback by default; another (a network
    ///   namespace's, `Netem/netem.sh`) makes the server reachable across a shaped link.
    public static func start(
        host: String = "127.0.0.1",
        port requestedPort: Int = 0,
        latency: Duration? = nil,
        configure: @Sendable (Router<BasicRequestContext>) -> Void = { _ in }
    ) async throws -> TestServer {
        let counters = TestServerCounters()
        let router = Router(context: BasicRequestContext.self)
        router.middlewares.add(CountingMiddleware(counters: counters))
        // What the server saw, for a test in another process (`courier serve` across a shaped
        // link): requests started (this one included) and connections opened.
        router.get("/counters") { _, _ in
            let body = "{\"requests\": \(counters.requests), \"connectionsOpened\": \(counters.connectionsOpened)}"
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        if let latency { router.middlewares.add(LatencyMiddleware(latency: latency)) }
        let lifecycle = ServerLifecycle()
        let quotas = QuotaLedger()
        router.middlewares.add(FaultMiddleware(lifecycle: lifecycle, quotas: quotas))
        HTTPBinRoutes.add(to: router, lifecycle: lifecycle)
        let gates = TestServerGates()
        gates.add(to: router, lifecycle: lifecycle)
        CountingRoutes.add(to: router)
        SampleJSON.add(to: router)
        PagedShapes.add(to: router)
        let notes = NotesAPI(lifecycle: lifecycle)
        notes.add(to: router)
        TicTacToeAPI.add(to: router)
        let tokens = TokenServer()
        let ownURL = LockedValue("")
        tokens.add(to: router, baseURL: { ownURL.withLock { $0 } }, notes: notes)
        BatchEndpoint.add(to: router, notes: notes, tokens: tokens, counters: counters)
        let files = FilesAPI()
        files.add(to: router)
        let metadata = MetadataServerFake(tokens: tokens)
        metadata.add(to: router)
        let sts = STSFake(tokens: tokens)
        sts.add(to: router)
        let iam = IAMCredentialsFake(tokens: tokens)
        iam.add(to: router)
        let discovery = DiscoveryFake()
        discovery.add(to: router)
        configure(router)

        var logger = Logger(label: "courier.test-server")
        // Critical only: what Hummingbird reports at error level here is a stop() that cancels a
        // slow graceful shutdown (below) or a client a fault test broke on purpose.
        logger.logLevel = .critical
        let faults = FaultCounts()
        let running = try await RunningApplication.start(
            router: router,
            server: .http1(configuration: HTTP1Channel.Configuration(additionalChannelHandlers: [KeptAliveDropHandler(faults: faults)])),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: requestedPort),
                availableConnectionsDelegate: ConnectionCounter(counters: counters)
            ),
            logger: logger
        )
        let port = running.port
        ownURL.withLock { $0 = "http://\(host):\(port)" }
        let faultServer = try await RawFaultServer.start(host: host, counters: counters, files: files, faults: faults)
        files.setBaseURLs(main: "http://\(host):\(port)", drop: "http://\(host):\(faultServer.port)/upload-drop")
        return TestServer(
            baseURL: URL(string: "http://\(host):\(port)")!,
            faultURL: URL(string: "http://\(host):\(faultServer.port)")!,
            counters: counters, notes: notes, tokens: tokens, files: files, metadata: metadata, sts: sts, iam: iam, discovery: discovery, faults: faults, quotas: quotas, gates: gates, lifecycle: lifecycle, application: running, faultServer: faultServer
        )
    }

    /// `baseURL` joined with `pathAndQuery`, which starts with `/`.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery)!
    }

    /// `127.0.0.1:<port>`: the value of `GCE_METADATA_HOST` that makes Google credentials use
    /// ``metadata``.
    public var metadataHost: String { "\(baseURL.host!):\(baseURL.port!)" }

    /// `faultURL` joined with `pathAndQuery`.
    public func faultURL(_ pathAndQuery: String) -> URL {
        URL(string: faultURL.absoluteString + pathAndQuery)!
    }

    /// Stops accepting, closes connections and waits for both listeners to end.
    public func stop() async {
        lifecycle.beginStopping() // long delays and stalls end now instead of holding up the shutdown
        await application.stop() // graceful, cut short after 2 s (see RunningApplication.stop)
        await faultServer.stop()
        files.remove()
    }
}

extension TestServer {
    /// What `/gzip` (any method) holds once decoded.
    /// What the raw fault server's coded bodies hold (`/gzip-cut`, …): 6,000 numbered lines,
    /// about 220 KB, whose gzip spans several of curl's 16 KiB buffers.
    public static let codedText = Data((0..<6000).map { "line \($0): the quick brown fox \($0 * 7919 % 10007)\n" }.joined().utf8)

    public static let gzipText = String(repeating: "Courier asked for gzip, and curl decoded it.\n", count: 8)
    /// What `/gzip` sends, always with `Content-Encoding: gzip`: ``gzipText`` compressed
    /// (Python's `gzip.compress(…, mtime=0)`, 69 bytes).
    public static let gzipBody = Data(base64Encoded:
        "H4sIAAAAAAACA3POLy3KTC1SSCzOTk1RSMsvUkivyizQUUjMS1FILi3KUUhJTc5PAUplluhxOY8qJlcxAP0ux9VoAQAA")!
}

/// Runs `body` with a started server and stops it afterwards.
@discardableResult
public func withTestServer<Result>(
    configure: @Sendable (Router<BasicRequestContext>) -> Void = { _ in },
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestServer) async throws -> Result
) async throws -> Result {
    let server = try await TestServer.start(configure: configure)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

public enum TestServerError: Error, CustomStringConvertible {
    /// The listener could not start, for the reason given (a port in use, say).
    case couldNotStart(String)
    /// A public key given to the test server is not an RSA key in PEM (SubjectPublicKeyInfo).
    case invalidKey

    public var description: String {
        switch self {
        case .couldNotStart(let reason): "the test server could not start: \(reason)"
        case .invalidKey: "the public key is not an RSA key in PEM (SubjectPublicKeyInfo)"
        }
    }
}
