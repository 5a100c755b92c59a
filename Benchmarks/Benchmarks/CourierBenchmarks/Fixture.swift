import Benchmark
import Courier
import CourierTestServer
import Foundation

/// The servers and services the benchmarks share, started once per process.
actor Fixture {
    static let shared = Fixture()

    struct Target: Sendable {
        let service: ServiceActor
        let json1K: URL
        let api: APIDescription
    }

    struct Notes: Sendable {
        let service: ServiceActor
        let api: APIDescription
        let files: APIDescription

        func batch() -> QueryBatch {
            var batch = QueryBatch()
            for number in 1...100 {
                batch.add(Query<GenericObject>(api: api, name: "notes.notes.get", path: "notes/{id}",
                                               pathParameters: ["id": String(format: "note-%04d", number)]))
            }
            return batch
        }
    }

    private var server: TestServer?
    private var loadService: ServiceActor?
    private var tlsServices: [String: ServiceActor] = [:]
    private var slowService: ServiceActor?
    private var notesFixture: Notes?

    private func testServer() async throws -> TestServer {
        if let server { return server }
        let started = try await TestServer.start()
        server = started
        return started
    }

    /// The test server's base URL (no trailing slash): COURIER_BENCH_SERVER_URL (`CourierBench
    /// serve` in another process, as `make bench-check` runs it, so the figures are Courier's
    /// alone: in this process the server's allocations moved a wire batch's count by over 1.5 %
    /// between runs of unchanged code), or a test server started in this process.
    private func serverBase() async throws -> URL {
        if let text = ProcessInfo.processInfo.environment["COURIER_BENCH_SERVER_URL"], let url = URL(string: text) {
            return url
        }
        return try await testServer().baseURL
    }

    private func serverURL(_ pathAndQuery: String) async throws -> URL {
        let base = try await serverBase()
        guard let url = URL(string: base.absoluteString + pathAndQuery) else { throw URLError(.badURL) }
        return url
    }

    /// Where concurrent GETs go: COURIER_BENCH_URL (a base URL serving /json/1024) or the test server.
    func target() async throws -> Target {
        let base: URL
        if let external = ProcessInfo.processInfo.environment["COURIER_BENCH_URL"], let url = URL(string: external) {
            base = url
        } else {
            base = try await serverBase()
        }
        if loadService == nil { loadService = try ServiceActor(configuration: Self.loadConfiguration()) }
        return Target(service: loadService!, json1K: base.appendingPathComponent("json/1024"),
                      api: APIDescription(name: "sample", version: "v1", rootURL: base, servicePath: ""))
    }

    /// `make bench`'s TLS cases: COURIER_BENCH_TLS_URL (a URL of a 1 KB file on an HTTPS server
    /// with a self-signed certificate, HTTP/2 enabled), nil when unset. HTTP/1.1 keeps a
    /// connection per request in flight; HTTP/2 multiplexes every stream on one connection.
    func tlsTarget(http2: Bool) throws -> (service: ServiceActor, url: URL)? {
        guard let text = ProcessInfo.processInfo.environment["COURIER_BENCH_TLS_URL"], let url = URL(string: text) else {
            return nil
        }
        let key = http2 ? "h2" : "http/1.1"
        if tlsServices[key] == nil {
            var configuration = Self.loadConfiguration()
            configuration.transport.httpVersion = http2 ? .http2 : .http1_1
            if http2 { configuration.limits.connections.maxConnectionsPerHost = 1 }
            configuration.transport.tls.verifyPeer = false // the benchmark server's self-signed certificate
            tlsServices[key] = try ServiceActor(configuration: configuration)
        }
        return (tlsServices[key]!, url)
    }

    private static func loadConfiguration() -> ServiceActor.Configuration {
        var configuration = ServiceActor.Configuration()
        configuration.limits.connections.maxConnectionsPerHost = 256
        configuration.limits.connections.maxConcurrentTransfersPerHost = 1024
        configuration.limits.connections.maxConcurrentTransfers = 2048
        configuration.limits.maxConcurrentQueries = 2048
        configuration.transport.automaticDecompression = false
        return configuration
    }

    /// The test server's route that answers after `milliseconds`, and a service that keeps up
    /// to 1,000 connections to it: for many queries in flight at once.
    func slowTarget(milliseconds: Int) async throws -> (service: ServiceActor, url: URL) {
        let url = try await serverURL("/delay/\(milliseconds)")
        var configuration = ServiceActor.Configuration()
        configuration.limits.connections = ConnectionLimits(maxConnectionsPerHost: 1000, maxConcurrentTransfersPerHost: 1000,
                                                            maxConcurrentTransfers: 1000)
        configuration.limits.maxConcurrentQueries = nil
        if slowService == nil { slowService = try ServiceActor(configuration: configuration) }
        return (slowService!, url)
    }

    func notes() async throws -> Notes {
        if let notesFixture { return notesFixture }
        let base = try await serverBase()
        var configuration = ServiceActor.Configuration()
        configuration.limits.batchConcurrency = 10
        configuration.transport.timeouts = Timeouts(connect: .seconds(10), idle: .seconds(60))
        let service = try ServiceActor(configuration: configuration)
        _ = try await service.send(HTTPRequest(method: .post, url: try await serverURL("/notes/v1/reset")))
        _ = try await service.send(HTTPRequest(method: .post, url: try await serverURL("/notes/v1/seed?count=100")))
        let notes = Notes(service: service,
                          api: APIDescription(name: "notes", version: "v1", rootURL: base, servicePath: "notes/v1/"),
                          files: APIDescription(name: "files", version: "v1", rootURL: base, servicePath: "files/v1/"))
        notesFixture = notes
        return notes
    }

    /// Where the benchmark's tasks run: on the loop (the executor preference Courier offers),
    /// or on the global executor, as the code every user writes does.
    enum Executor: String, CaseIterable { case loop, global }

    /// Voluntary context switches of the whole process per 1,000 requests (``ContextSwitches``).
    static let contextSwitches = BenchmarkMetric.custom("voluntaryContextSwitchesPer1000Requests")

    /// Completes `total` operations with `inFlight` running at once.
    static func drive(_ service: ServiceActor, inFlight: Int, total: Int, on executor: Executor = .loop,
                      _ operation: @escaping @Sendable () async throws -> Void) async throws {
        let workers = min(inFlight, total)
        let work: @Sendable () async throws -> Void = {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    let share = total / workers + (worker < total % workers ? 1 : 0)
                    group.addTask {
                        for _ in 0..<share { try await operation() }
                    }
                }
                try await group.waitForAll()
            }
        }
        switch executor {
        case .loop: try await withTaskExecutorPreference(service.executor) { try await work() }
        case .global: try await work()
        }
    }

    static let payload = Data((0..<(64 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    /// A notes-like collection: `{"kind":…,"items":[…],"nextPageToken":…}`.
    static func collection(items: Int) -> Data {
        var text = #"{"kind":"courier#sampleList","nextPageToken":"abc","items":["#
        for index in 0..<items {
            if index > 0 { text += "," }
            text += #"{"kind":"courier#sample","id":"note-\#(index)","title":"Note number \#(index) with some words","#
                + #""body":"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam","#
                + #""created":"2026-11-22T05:00:00.000Z","size":"\#(index * 1_000_003)","tags":["a","b","c"],"#
                + #""owner":{"name":"Ada","email":"ada@example.com","id":"1234567890"},"starred":\#(index % 2 == 0),"score":\#(Double(index) / 7)}"#
        }
        return Data((text + "]}").utf8)
    }
}

/// The `/json/{size}` document, typed.
struct Sample: APIObject {
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    var kind: String? { json["kind"]?.stringValue }
}

struct SampleList: APICollection {
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    typealias Item = Sample
}

/// The process's voluntary context switches since creation (`getrusage`): every time one of its
/// threads blocked. C on libcurl makes 1 per request one at a time and 0 at 64 in flight.
struct ContextSwitches {
    private let start = ContextSwitches.now()

    func perThousand(_ requests: Int) -> Int {
        (Self.now() - start) * 1000 / max(1, requests)
    }

    private static func now() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_nvcsw
    }
}
