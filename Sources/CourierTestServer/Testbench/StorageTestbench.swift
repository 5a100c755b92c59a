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
/// connection reset before the answer, a response body broken after 4 bytes or N KiB, and an
/// upload that keeps N KiB and then fails. Behind it is an in-memory Cloud Storage JSON API with
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
    private let lifecycle: ServerLifecycle
    private let serviceGroup: ServiceGroup
    private let application: Task<Void, any Error>

    private init(baseURL: URL, retryTests: RetryTestRegistry, store: StorageStore, lifecycle: ServerLifecycle,
                 serviceGroup: ServiceGroup, application: Task<Void, any Error>) {
        self.baseURL = baseURL
        self.retryTests = retryTests
        self.store = store
        self.lifecycle = lifecycle
        self.serviceGroup = serviceGroup
        self.application = application
    }

    /// Starts the emulator on 127.0.0.1 and an ephemeral port.
    public static func start() async throws -> StorageTestbench {
        let retryTests = RetryTestRegistry()
        let store = StorageStore()
        let lifecycle = ServerLifecycle()
        let baseURL = LockedValue("")
        let router = Router(context: TestbenchContext.self)
        let handler = TestbenchHandler(retryTests: retryTests, store: store, baseURL: { baseURL.withLock { $0 } })
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            router.on("/**", method: method) { request, context in
                try await handler.handle(request, context: context)
            }
        }
        var logger = Logger(label: "courier.storage-testbench")
        logger.logLevel = .critical // the resets and broken streams are on purpose
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = portStream.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw TestServerError.couldNotStart("the storage testbench did not start")
        }
        baseURL.withLock { $0 = "http://127.0.0.1:\(port)" }
        return StorageTestbench(baseURL: URL(string: "http://127.0.0.1:\(port)")!, retryTests: retryTests, store: store,
                                lifecycle: lifecycle, serviceGroup: group, application: task)
    }

    /// Stops the listener and waits for it to end.
    public func stop() async {
        lifecycle.beginStopping()
        await serviceGroup.triggerGracefulShutdown()
        let application = application
        let deadline = Task {
            try await Task.sleep(for: .seconds(2))
            application.cancel()
        }
        _ = await application.result
        deadline.cancel()
    }

    /// How many requests reached each method (the conformance method names), for tests that
    /// count re-sends.
    public func requests(to method: String) -> Int { store.requestCount(method) }

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
