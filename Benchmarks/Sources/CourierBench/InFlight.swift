import ArgumentParser
import CMallocStats
import Courier
import Foundation
import Synchronization

/// 10,000 queries in flight in one task group against a slow route (`CourierBench serve`'s
/// `/delay/{ms}` in another process): does it complete, does the thread count stay put, and
/// how much memory does each in-flight query cost?
struct InFlight: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "inflight", abstract: "Many queries in flight at once: threads and memory.")

    @Option(help: "A slow URL, as http://127.0.0.1:PORT/delay/2000.") var url: String
    @Option(help: "Queries in flight at once.") var queries = 10_000
    @Option(help: "Connections per host (the rest wait inside curl for one).") var connections = 1_000
    @Option(help: "group | sendall: a child task per query in one task group, or service.sendAll with all of them in flight.")
    var pattern = "group"

    func run() async throws {
        guard ["group", "sendall"].contains(pattern) else { throw ValidationError("--pattern: group or sendall") }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)

        var configuration = ServiceActor.Configuration()
        // As many transfers as connections: the rest of the queries wait in Courier's admission
        // queue, a few hundred bytes each, instead of each holding a curl easy handle (~10 KiB).
        configuration.limits.connections.maxConnectionsPerHost = connections
        configuration.limits.connections.maxConcurrentTransfersPerHost = connections
        configuration.limits.connections.maxConcurrentTransfers = connections
        configuration.transport.timeouts = Timeouts(connect: .seconds(60), total: .seconds(300))
        let request = HTTPRequest(url: URL(string: url)!)
        try await withService(configuration: configuration) { service in
            // Warm-up: the connections, the handle pool and the runtime's own caches.
            _ = try await withTaskExecutorPreference(service.executor) {
                try await ClosedLoop.drive(concurrency: connections, seconds: 0.1) { _ = try await service.send(request) }
            }
            // The sampler is a thread of its own, not a task: a task's sleeps and wakes would go
            // through the global pool, whose thread count is what is measured. The "before"
            // figures are taken once it runs, so they count it.
            let peak = Mutex((rss: 0, threadsMin: Int.max, threadsMax: 0))
            let stop = Atomic(false)
            let sampler = Thread {
                while !stop.load(ordering: .relaxed) {
                    let (rss, threads) = (Probe.residentKiB(), Probe.threads())
                    peak.withLock { $0 = (max($0.rss, rss), min($0.threadsMin, threads), max($0.threadsMax, threads)) }
                    usleep(20_000)
                }
            }
            sampler.start()
            try await Task.sleep(for: .milliseconds(200))
            let threadsBefore = Probe.threads()
            let rssBefore = Probe.residentKiB()
            peak.withLock { $0 = (rssBefore, threadsBefore, threadsBefore) }
            let started = ContinuousClock.now
            let succeeded: Int
            if pattern == "sendall" {
                var ok = 0
                for await (_, result) in service.sendAll(repeatElement(request, count: queries), maxInFlight: queries) {
                    if (try? result.get().status) == 200 { ok += 1 }
                }
                succeeded = ok
            } else {
                succeeded = try await withTaskExecutorPreference(service.executor) {
                    try await withThrowingTaskGroup(of: Bool.self) { group in
                        for _ in 0..<queries {
                            group.addTask { try await service.send(request).status == 200 }
                        }
                        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                    }
                }
            }
            let elapsed = ContinuousClock.now - started
            stop.store(true, ordering: .relaxed)
            let figures = peak.withLock { $0 }
            let perQuery = Double(figures.rss - rssBefore) * 1024 / Double(queries)
            print(String(format: "in-flight %d  succeeded %d  seconds %.2f  threads-before %d  threads-during %d-%d  rss-before-MiB %.1f  rss-peak-MiB %.1f  bytes/query %.0f",
                         queries, succeeded, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                         threadsBefore, figures.threadsMin, figures.threadsMax, Double(rssBefore) / 1024, Double(figures.rss) / 1024, perQuery))
        }
    }
}

enum Probe {
    static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).filter(\.isNumber)) ?? 0 // "VmRSS:\t  1234 kB"
        }
        return 0
    }

    static func threads() -> Int { status("Threads") }
    static func residentKiB() -> Int { status("VmRSS") }

    /// Bytes malloc has handed out and not had back, over all arenas (glibc's mallinfo2):
    /// what a leak grows, unlike RSS, which also holds freed memory the allocator keeps.
    static func heapInUseKiB() -> Int {
        courier_heap_in_use() / 1024
    }
}
