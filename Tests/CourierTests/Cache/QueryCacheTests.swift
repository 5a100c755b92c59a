@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import MetricsTestKit
import CourierTestSupport
import Testing

/// The ETag cache and coalescing of identical GETs, against the test server's notes API (ETag
/// on every note, 304 for a matching `If-None-Match`).
@Suite struct QueryCacheTests {
    /// Sees every request before it is sent; optionally adds a fault header.
    final class Watcher: Authorizer {
        let fault: String?
        let seen = LockedValue<[HTTPRequest]>([])
        init(fault: String? = nil) { self.fault = fault }
        func authorize(_ request: inout HTTPRequest) async throws {
            if let fault { request.headers["X-Courier-Fault"] = "\(fault);run=\(ObjectIdentifier(self).hashValue)" }
            let copy = request
            seen.withLock { $0.append(copy) }
        }
        func invalidate(_ rejected: HTTPRequest) async {}
        var conditional: Int { seen.withLock { $0.filter { $0.headers["If-None-Match"] != nil }.count } }
    }

    static func configuration(_ server: TestServer, _ watcher: Watcher, metrics: TestMetrics? = nil,
                              caching: QueryCaching = QueryCaching()) -> ServiceActor.Configuration {
        var configuration = ServiceActor.Configuration.testing(server.baseURL)
        configuration.auth.authorizer = watcher
        configuration.queries.caching = caching
        configuration.telemetry.metricsFactory = metrics
        return configuration
    }

    @Test func aNotModifiedAnswerIsServedFromTheCache() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let watcher = Watcher()
            let metrics = TestMetrics()
            try await withCheckedService(configuration: Self.configuration(server, watcher, metrics: metrics)) { service in
                let first = try await service.execute(Notes.get("note-0001"))
                let second = try await service.execute(Notes.get("note-0001"))
                #expect(watcher.conditional == 1, "the second GET did not revalidate")
                #expect(second.id == "note-0001" && second.title == first.title && second.etag == first.etag)
                #expect(second.json == first.json)
                #expect(metrics.counterTotal(label: "courier_cache_requests_total", dimensions: [("result", "miss")]) == 1)
                #expect(metrics.counterTotal(label: "courier_cache_requests_total", dimensions: [("result", "hit")]) == 1)
                #expect((try metrics.expectGauge("courier_cache_bytes").lastValue ?? 0) > 0)
            }
        }
    }

    /// A write through a query drops the cached answer for its path; a changed object comes
    /// back whole ("modified") when the ETag no longer matches.
    @Test func writesAndChangesAreNeverServedStale() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let watcher = Watcher()
            let metrics = TestMetrics()
            try await withCheckedService(configuration: Self.configuration(server, watcher, metrics: metrics)) { service in
                _ = try await service.execute(Notes.get("note-0001"))
                _ = try await service.execute(Notes.patch(id: "note-0001", Note(json: ["title": "changed"])))
                let afterWrite = try await service.execute(Notes.get("note-0001"))
                #expect(afterWrite.title == "changed")
                #expect(watcher.conditional == 0, "the write did not drop the cached answer")
                // Changed behind the cache's back (another client): the ETag no longer matches.
                var other = ServiceActor.Configuration.testing(server.baseURL)
                other.retry = .disabled
                try await withCheckedService(configuration: other) { writer in
                    _ = try await writer.execute(Notes.patch(id: "note-0001", Note(json: ["title": "elsewhere"])))
                }
                let fresh = try await service.execute(Notes.get("note-0001"))
                #expect(fresh.title == "elsewhere")
                #expect(watcher.conditional == 1)
                #expect(metrics.counterTotal(label: "courier_cache_requests_total", dimensions: [("result", "modified")]) == 1)
            }
        }
    }

    /// The case: 1,000 identical GETs at once reach the server as one request, and
    /// every caller gets its own copy of the object.
    @Test func aThousandIdenticalGETsAreOneRequest() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let watcher = Watcher(fault: "slow-2000")
            let metrics = TestMetrics()
            try await withCheckedService(configuration: Self.configuration(server, watcher, metrics: metrics)) { service in
                let before = server.counters.requests
                let ids = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<1_000 { group.addTask { try await service.execute(Notes.get("note-0001")).id } }
                    return try await group.reduce(into: [String?]()) { $0.append($1) }
                }
                #expect(ids.count == 1_000 && ids.allSatisfy { $0 == "note-0001" })
                #expect(server.counters.requests - before == 1)
                #expect(metrics.counterTotal(label: "courier_coalesced_requests_total") == 999)
            }
        }
    }

    /// Opting out, per query, sends its own request.
    @Test func aQueryCanOptOutOfCoalescing() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let watcher = Watcher(fault: "slow-500")
            try await withCheckedService(configuration: Self.configuration(server, watcher)) { service in
                let before = server.counters.requests
                var alone = Notes.get("note-0001")
                alone.execution.coalesced = false
                alone.execution.cached = false
                async let a = service.execute(alone)
                async let b = service.execute(alone)
                _ = try await (a, b)
                #expect(server.counters.requests - before == 2)
                #expect(watcher.conditional == 0)
            }
        }
    }

    /// A cancelled caller leaves the others their answer; when every caller has left, the
    /// shared request is cancelled too.
    @Test func cancellationLeavesTheOtherCallersTheirAnswer() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let watcher = Watcher(fault: "slow-1500")
            try await withCheckedService(configuration: Self.configuration(server, watcher)) { service in
                let leaving = Task { try await service.execute(Notes.get("note-0001")) }
                let staying = Task { try await service.execute(Notes.get("note-0001")) }
                #expect(await eventually { server.counters.inFlight == 1 })
                leaving.cancel()
                await #expect(throws: CancellationError.self) { try await leaving.value }
                let stayed = try await staying.value
                #expect(stayed.id == "note-0001")

                // Everyone leaves: the request goes too.
                let alone = Task { try await service.execute(Notes.get("note-0001")) }
                #expect(await eventually { server.counters.inFlight == 1 })
                alone.cancel()
                await #expect(throws: CancellationError.self) { try await alone.value }
                #expect(await eventually { await service.stats.liveTransfers == 0 })
            }
        }
    }

    // MARK: The LRU, a value

    @Test func theCacheKeepsTheMostRecentlyUsedWithinItsBytes() {
        var cache = ResponseCache(maximumBytes: 250)
        func entry(_ size: Int, path: String = "/p") -> ResponseCache.Entry {
            ResponseCache.Entry(etag: "\"e\"", response: HTTPResponse(status: 200, body: Data(count: size), url: URL(string: "http://h/")!),
                                path: path)
        }
        cache.store(entry(100), for: "a")
        cache.store(entry(100), for: "b")
        _ = cache.entry("a") // a is now the most recent
        cache.store(entry(100), for: "c")
        #expect(cache.entry("b") == nil)
        #expect(cache.entry("a") != nil && cache.entry("c") != nil)
        #expect(cache.bytes == 200)
        cache.store(entry(300), for: "huge")
        #expect(cache.entry("huge") == nil && cache.count == 2)
        cache.store(entry(10, path: "/q"), for: "q")
        #expect(cache.removeAll(path: "/p") == 2)
        #expect(cache.count == 1)
    }
}
