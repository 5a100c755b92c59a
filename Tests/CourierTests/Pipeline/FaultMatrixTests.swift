@testable import Courier
import CourierTestServer
import Foundation
import Synchronization
import CourierTestSupport
import Testing

/// Every fault against every operation: each run ends in success after retries, or in a typed
/// error, within a bounded time, leaving no transfer, handle or file descriptor behind; uploads
/// that succeed are verified byte for byte by downloading them again.
///
/// The fault rides on every request the operation makes, in `X-Courier-Fault`, added by an
/// authorizer (the service asks it for every request, and once per wire batch).
@Suite struct FaultMatrixTests {
    enum Operation: String, CaseIterable, Sendable {
        case query, pagedList, taskGroupBatch, wireBatch, resumableUpload, download
    }

    /// HTTP-level faults on the real API: each distinct request fails this often, then succeeds.
    static let transient = ["503x2", "429x1", "slow-300", "slow-body"]
    /// Wire-level faults on every request: the operation must fail with a typed error. All come
    /// from the raw fault server but the stalled body, which the real API routes send (half of
    /// each body, then nothing) so that every operation meets it on its own responses.
    static let fatal = ["reset-before-headers", "reset-mid-body", "truncated", "bad-chunked", "huge-header",
                        "stall-headers", "not-http", "stall-body"]

    struct FaultInjector: Authorizer {
        let fault: String
        let run = UUID().uuidString // the server counts transient faults per run
        func authorize(_ request: inout HTTPRequest) async throws { request.headers["X-Courier-Fault"] = "\(fault);run=\(run)" }
    }

    /// Short idle timeouts end stalls quickly where failure is the expected outcome; where success
    /// is, a loaded machine (the whole suite runs in parallel on two cores) gets more slack.
    static func configuration(root: URL, fault: String, idle: Duration = .seconds(15)) -> ServiceActor.Configuration {
        var configuration = ServiceActor.Configuration.testing(root)
        configuration.auth.authorizer = FaultInjector(fault: fault)
        configuration.retry = RetryPolicy(maxRetries: 3, initialDelay: 0.01...0.02, multiplier: 2, maxDelay: .seconds(2))
        configuration.retry.retryableStatuses.insert(429) // opt-in, as in GTMSessionFetcher
        configuration.transport.timeouts = Timeouts(connect: .seconds(10), total: .seconds(30), idle: idle)
        configuration.queries.paging = .fetchAll(maxPages: 10)
        return configuration
    }

    /// Runs `operation`; returns nil on success or the error it ended with.
    static func run(_ operation: Operation, service: ServiceActor, server: TestServer, fileID: String) async throws -> (any Error)? {
        do {
            switch operation {
            case .query:
                let note = try await service.execute(Notes.get("note-0001"))
                #expect(note.id == "note-0001")
            case .pagedList:
                let list = try await service.execute(Notes.list(maxResults: 2))
                #expect(list.items.count == 5)
            case .taskGroupBatch:
                let results = try await service.batch(QueryBatch(Notes.get("note-0001"), Notes.get("note-0002"), Notes.get("note-0003")))
                if let failure = results.failures.values.first { throw failure }
                #expect(results.successes.count == 3)
            case .wireBatch:
                let results = try await service.executeBatch(QueryBatch(Notes.get("note-0001"), Notes.get("note-0002")))
                if let failure = results.failures.values.first { throw failure }
                #expect(results.successes.count == 2)
            case .resumableUpload:
                let contents = Data(TestPattern.bytes(count: 700_000))
                var parameters = UploadParameters(data: contents, mimeType: "application/octet-stream")
                parameters.chunkSize = 256 << 10
                let stored = try await service.execute(Files.insert(server, name: "matrix-\(UUID())", upload: parameters))
                let id = try #require(stored.json["id"]?.stringValue)
                var check = ServiceActor.Configuration.testing(server.baseURL)
                check.retry = .disabled
                let media = try await withCheckedService(configuration: check) { clean in try await clean.execute(Files.media(server, id: id)) }
                #expect(media.data == contents, "the upload arrived changed")
            case .download:
                let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-matrix-\(UUID())")
                // A failed download keeps its bytes and sidecar beside the file, for a resume.
                defer {
                    for file in [target, PartialDownload.dataFile(for: target), PartialDownload.sidecar(for: target)] {
                        try? FileManager.default.removeItem(at: file)
                    }
                }
                let result = try await service.downloadFile(Files.media(server, id: fileID), to: target)
                #expect(try Data(contentsOf: target) == Data(TestPattern.bytes(count: 300_000)))
                #expect(result.bytes == 300_000)
            }
            return nil
        } catch {
            return error
        }
    }

    /// Runs `operation` on a fresh service made from `configuration`: nothing may be left in the
    /// service afterwards, and it must end within `bound`: seconds alone, and the bound catches a
    /// retry loop that never ends, not slowness (63–69 s were seen with a release build beside
    /// the parallel suite on 2 cores). Returns the error it ended with, if any.
    static func run(_ operation: Operation, _ configuration: ServiceActor.Configuration, server: TestServer, fileID: String,
                    label: String, within bound: Duration = .seconds(120)) async throws -> (any Error)? {
        let started = ContinuousClock.now
        let error = try await withCheckedService(configuration: configuration) { service in
            let error = try await run(operation, service: service, server: server, fileID: fileID)
            await expectNoLeaks(service)
            return error
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < bound, "\(operation) under \(label) took \(elapsed)")
        return error
    }

    static func isTyped(_ error: any Error) -> Bool {
        error is TransportError || error is APIError || error is QueryError || error is UploadError || error is BatchError
            || error is AuthError
    }

    /// This process's descriptors that belong to `server`'s test: client sockets connected to
    /// its ports, and files of the matrix's downloads.
    static func leftoverDescriptors(of server: TestServer) -> [String] {
        openDescriptors(connectedTo: Set([server.baseURL.port, server.faultURL.port].compactMap { $0 }), fileMarker: "courier-matrix-")
    }

    /// Waits until nothing of `server`'s test is open (services close their sockets as they
    /// shut down; an authorizer's token transport closes when the authorizer is released).
    static func expectNothingLeftOpen(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) async {
        let closed = await eventually { leftoverDescriptors(of: server).isEmpty }
        #expect(closed, "still open: \(leftoverDescriptors(of: server))", sourceLocation: sourceLocation)
    }

    /// Seeds five notes and one 300,000-byte file through a clean service; returns the file's ID.
    static func prepare(_ server: TestServer) async throws -> String {
        server.notes.seed(count: 5)
        var clean = ServiceActor.Configuration.testing(server.baseURL)
        clean.retry = .disabled
        return try await withCheckedService(configuration: clean) { service in
            let parameters = UploadParameters(data: Data(TestPattern.bytes(count: 300_000)), mimeType: "application/octet-stream",
                                              uploadProtocol: .media)
            let stored = try await service.execute(Files.insert(server, name: "matrix", upload: parameters))
            return try #require(stored.json["id"]?.stringValue)
        }
    }

    /// The descriptor check is not vacuous: it sees the connection a live service keeps alive.
    @Test func theLeakCheckSeesALiveConnection() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                _ = try await service.send(HTTPRequest(url: server.url("/echo")))
                #expect(await eventually { Self.leftoverDescriptors(of: server).count == 1 }, "\(Self.leftoverDescriptors(of: server))")
            }
            await Self.expectNothingLeftOpen(server)
        }
    }

    // One case per operation and fault, each with a server of its own: the faults of one
    // operation in turn took 45 s in the parallel suite (the stalls wait out idle timeouts and
    // retries), the longest path through the whole suite.
    @Test(.timeLimit(.minutes(5)), arguments: Operation.allCases, FaultMatrixTests.transient)
    func transientFaultsEndInSuccess(operation: Operation, fault: String) async throws {
        try await withTestServer { server in
            let fileID = try await Self.prepare(server)
            let error = try await Self.run(operation, Self.configuration(root: server.baseURL, fault: fault), server: server,
                                           fileID: fileID, label: fault)
            #expect(error == nil, "\(operation) under \(fault): \(String(describing: error))")
            await Self.expectNothingLeftOpen(server)
        }
    }

    @Test(.timeLimit(.minutes(5)), arguments: Operation.allCases, FaultMatrixTests.fatal)
    func wireFaultsEndInTypedErrors(operation: Operation, fault: String) async throws {
        try await withTestServer { server in
            let fileID = try await Self.prepare(server)
            let root = fault == "stall-body" ? server.baseURL : server.faultURL
            let error = try await Self.run(operation, Self.configuration(root: root, fault: fault, idle: .seconds(2)),
                                           server: server, fileID: fileID, label: fault, within: .seconds(40))
            if let error {
                #expect(Self.isTyped(error), "\(operation) under \(fault) ended in an untyped \(type(of: error)): \(error)")
            } else {
                Issue.record("\(operation) under \(fault) succeeded against a server that only faults")
            }
            // The service is gone: its sockets and files must be too.
            await Self.expectNothingLeftOpen(server)
        }
    }
}
