import CourierSync
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// A model of Google's Cloud Storage emulator, storage-testbench (googleapis/storage-testbench),
/// for the retry conformance cases (`storage/v1/retry_tests.json` of googleapis/conformance-tests)
/// that Google's client libraries run against it.
///
/// It speaks the emulator's Retry Test API (``RetryTestRegistry``: `POST /retry_test`,
/// `GET /retry_test/{id}`, the `x-retry-test-id` header) and injects each instruction as the
/// emulator does (read from its `testbench/common.py` and `rest_server.py`): a status, a
/// connection reset before the answer, a response body broken after 4 bytes or N KiB, an
/// upload that keeps N KiB and then fails, the 200 that completes a resumable upload cut to N
/// bytes (`return-broken-stream-final-chunk-after-NB`), and a pause of N seconds after N KiB of
/// a response or before an upload request that reaches N KiB (`stall-for-Ns-after-NK`). Behind it is an in-memory Cloud Storage JSON API with
/// every method the cases name: buckets, their ACLs, default object ACLs, IAM policies and
/// notifications; objects with their ACLs, media (multipart, media and resumable uploads, ranged
/// downloads), compose, copy and rewrite; HMAC keys and the project's service account. It checks
/// the generation and metageneration preconditions (412 on a mismatch) and IAM and HMAC etags.
///
/// Its own listener: a reset needs the request's channel, which this server's context keeps.
public final class StorageTestbench: Sendable {
    /// `http://127.0.0.1:<port>`: the root URL of the JSON API (`/storage/v1/`), uploads
    /// (`/upload/storage/v1/`) and downloads (`/download/storage/v1/`).
    public let baseURL: URL
    public let retryTests: RetryTestRegistry
    let store: StorageStore
    let signedURLs: SignedURLVerifier
    private let lifecycle: ServerLifecycle
    private let application: RunningApplication

    private init(baseURL: URL, retryTests: RetryTestRegistry, store: StorageStore, signedURLs: SignedURLVerifier,
                 lifecycle: ServerLifecycle, application: RunningApplication) {
        self.baseURL = baseURL
        self.retryTests = retryTests
        self.store = store
        self.signedURLs = signedURLs
        self.lifecycle = lifecycle
        self.application = application
    }

    /// Starts the emulator on 127.0.0.1 and an ephemeral port.
    public static func start() async throws -> StorageTestbench {
        let retryTests = RetryTestRegistry()
        let store = StorageStore()
        let signedURLs = SignedURLVerifier()
        let lifecycle = ServerLifecycle()
        let baseURL = LockedValue("")
        let router = Router(context: TestbenchContext.self)
        let handler = TestbenchHandler(retryTests: retryTests, store: store, signedURLs: signedURLs, baseURL: { baseURL.withLock { $0 } })
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            router.on("/**", method: method) { request, context in
                try await handler.handle(request, context: context)
            }
        }
        var logger = Logger(label: "courier.storage-testbench")
        logger.logLevel = .critical // the resets and broken streams are on purpose
        let running = try await RunningApplication.start(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        let port = running.port
        baseURL.withLock { $0 = "http://127.0.0.1:\(port)" }
        return StorageTestbench(baseURL: URL(string: "http://127.0.0.1:\(port)")!, retryTests: retryTests, store: store,
                                signedURLs: signedURLs, lifecycle: lifecycle, application: running)
    }

    /// Stops the listener and waits for it to end.
    public func stop() async {
        lifecycle.beginStopping()
        await application.stop()
    }

    /// How many requests reached each method (the conformance method names), for tests that
    /// count re-sends.
    public func requests(to method: String) -> Int { store.requestCount(method) }

    /// Lets `account` sign V4 signed URLs for the XML API routes (`PUT`/`GET /<bucket>/<object>`
    /// with `X-Goog-Signature`): its public key (SubjectPublicKeyInfo PEM).
    public func trust(account: String, publicKeyPEM: String) throws {
        try signedURLs.trust(account: account, publicKeyPEM: publicKeyPEM)
    }

    /// Signed requests refused for `code` (`SignatureDoesNotMatch`, `ExpiredToken` …).
    public func signedURLRefusals(_ code: String) -> Int { signedURLs.refusals.withLock { $0[code] ?? 0 } }

    /// The headers of every request that reached `method`, in order.
    public func headers(of method: String) -> [[String: String]] { store.seenHeaders(method) }
}

/// The request context of the testbench's routes: Hummingbird's, plus the channel, which a
/// reset closes.
struct TestbenchContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Uploads in the cases reach 9 MiB.
    var maxUploadSize: Int { 64 << 20 }
}
