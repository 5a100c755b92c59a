import ArgumentParser
import Courier
import CourierTestServer
import Foundation

/// The figures of Docs/Performance.md's "Rate limits, coalescing" section, against an in-process
/// test server (no arguments needed):
///
/// - **429 storm**: a server quota of `quota` requests per second (429 `RESOURCE_EXHAUSTED`
///   beyond), `queries` GETs started at once by a client that believes 5× the quota; with
///   retries alone, with a fixed limit at the believed rate, and with the adaptive limit.
/// - **coalescing**: 1,000 identical GETs at once, and `hot-seconds` of 64 workers reading the
///   same object, with the server `latency-ms` away; with and without caching.
struct ResilienceBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resilience",
                                                    abstract: "The 429 storm and the coalescing case (Docs/Performance.md).")

    @Option(help: "The server's quota, requests per second.") var quota = 200
    @Option(help: "Queries in the storm.") var queries = 2_000
    @Option(help: "Milliseconds the server adds to each request in the coalescing case.") var latencyMs = 20
    @Option(help: "Seconds of the hot-object read.") var hotSeconds = 5.0
    @Option(help: "storm | coalesce | all") var only = "all"

    struct Note: APIObject {
        var json: JSONObject
        var userProperties = UserProperties()
        init(json: JSONObject = [:]) { self.json = json }
    }

    /// Adds the test server's fault header to every request.
    struct Tagger: Authorizer {
        let header: String
        func authorize(_ request: inout HTTPRequest) async throws { request.headers["X-Courier-Fault"] = header }
        func invalidate(_ rejected: HTTPRequest) async {}
    }

    func run() async throws {
        if only != "coalesce" { try await storm() }
        if only != "storm" { try await coalescing() }
    }

    static func get(_ server: TestServer) -> Query<Note> {
        let api = APIDescription(name: "notes", version: "v1", rootURL: server.baseURL, servicePath: "notes/v1/")
        return Query(api: api, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": "note-0001"])
    }

    // MARK: The 429 storm

    func storm() async throws {
        print("429 storm: quota \(quota)/s, \(queries) queries at once, the client believes \(quota * 5)/s")
        print("form                 seconds  ideal  requests  429s  failed  max-window-after-2s")
        for form in ["retries only", "fixed limit", "adaptive limit"] {
            let server = try await TestServer.start()
            server.notes.seed(count: 1)
            let header = "quota-\(quota);run=\(UUID())"
            var configuration = ServiceActor.Configuration()
            configuration.auth.authorizer = Tagger(header: header)
            configuration.limits.connections.maxConnectionsPerHost = 64
            switch form {
            case "fixed limit": configuration.limits.rateLimits = RateLimits(.perSecond(Double(quota * 5), adaptive: false))
            case "adaptive limit": configuration.limits.rateLimits = RateLimits(.perSecond(Double(quota * 5)))
            default: break
            }
            let started = ContinuousClock.now
            let failed = try await withService(configuration: configuration) { service in
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<queries {
                        group.addTask { (try? await service.execute(Self.get(server))) == nil }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
            }
            let seconds = (ContinuousClock.now - started).seconds
            let windows = server.quotas.windows(header)
            let total = windows.reduce(0) { $0 + $1.total }
            let refused = windows.reduce(0) { $0 + $1.refused }
            let settled = windows.dropFirst(2).map(\.total).max() ?? 0
            print(form.padding(toLength: 20, withPad: " ", startingAt: 0)
                + String(format: " %7.1f  %5.1f  %8d  %4d  %6d  %d", seconds, Double(queries) / Double(quota), total, refused,
                         failed, settled))
            await server.stop()
        }
    }

    // MARK: Coalescing

    func coalescing() async throws {
        let server = try await TestServer.start(latency: .milliseconds(latencyMs))
        server.notes.seed(count: 1)
        defer { Task { await server.stop() } }
        print("coalescing: the server \(latencyMs) ms away")
        print("form                 burst-ms  burst-requests  hot-reads/s  hot-requests/s")
        for form in ["plain", "cache + coalescing"] {
            var configuration = ServiceActor.Configuration()
            configuration.limits.connections.maxConnectionsPerHost = 64
            configuration.limits.connections.maxConcurrentTransfersPerHost = 1_000
            if form != "plain" { configuration.queries.caching = QueryCaching() }
            try await withService(configuration: configuration) { service in
                let query = Self.get(server)
                _ = try await service.execute(query) // connections warm
                let before = server.counters.requests
                let started = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<1_000 { group.addTask { _ = try await service.execute(query) } }
                    try await group.waitForAll()
                }
                let burst = (ContinuousClock.now - started).seconds * 1000
                let burstRequests = server.counters.requests - before

                let hotBefore = server.counters.requests
                let deadline = ContinuousClock.now + .milliseconds(Int(hotSeconds * 1000))
                let reads = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<64 {
                        group.addTask {
                            var done = 0
                            while ContinuousClock.now < deadline {
                                _ = try await service.execute(query)
                                done += 1
                            }
                            return done
                        }
                    }
                    return try await group.reduce(0, +)
                }
                let hotRequests = server.counters.requests - hotBefore
                print(form.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(format: " %8.0f  %14d  %11.0f  %14.0f", burst, burstRequests, Double(reads) / hotSeconds,
                             Double(hotRequests) / hotSeconds))
            }
        }
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
