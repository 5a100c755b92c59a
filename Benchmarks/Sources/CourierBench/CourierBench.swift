import ArgumentParser
import Courier
import CourierTestServer
import Foundation
import Synchronization

@main
struct CourierBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-bench",
        abstract: "The comparison clients and probes that `make bench` runs.",
        subcommands: [Load.self, OpenAPIBench.self, InFlight.self, Idle.self, Soak.self, Serve.self, JSONBench.self, BatchBench.self, UploadBench.self, DownloadBench.self, ResilienceBench.self]
    )
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the test server until killed.")

    @Option(help: "Milliseconds added to every request, standing in for a network round trip.") var latencyMs = 0

    func run() async throws {
        let server = try await TestServer.start(latency: latencyMs > 0 ? .milliseconds(latencyMs) : nil)
        print(server.baseURL.absoluteString)
        print(server.faultURL.absoluteString)
        fflush(nil)
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}

struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send GETs with a fixed number in flight and report requests/s, CPU per request and peak RSS.",
        discussion: "--client picks Courier (the default), AsyncHTTPClient or URLSession, driven by the same loop."
    )

    @Option(help: "The URL to GET.") var url: String
    @Option(name: .shortAndLong, help: "Requests in flight.") var concurrency = 64
    @Option(name: .shortAndLong, help: "Seconds to run, after a 1 s warm-up.") var duration = 5.0
    @Option(help: "courier | ahc | urlsession") var client = "courier"
    @Option(help: "default | loop | global: no preference (what users write), the loop as preference, or the global pool as preference.")
    var executor = "loop"
    @Option(help: "epoll | multipoll") var backend = "epoll"
    @Option(help: "Connections per host.") var connections = 64
    @Option(help: "Slow requests held open during the run (long polls), to a different URL.") var background = 0
    @Option(help: "The URL of the background requests.") var backgroundURL: String?
    @Flag(help: "Skip TLS certificate checks (a self-signed test server).") var insecure = false
    @Option(help: "1.1 | 2: HTTP/1.1 only, or HTTP/2 where TLS offers it (then multiplexed on --connections).")
    var httpVersion = "1.1"
    @Option(help: "Send exactly this many requests, with no warm-up, instead of running for --duration (for instruction counts).")
    var requests: Int?
    @Option(help: """
        workers | child | sendall: long-lived workers each sending their next request (the default); a task group \
        adding a child task per request to keep the window full; service.sendAll's window.
        """)
    var pattern = "workers"

    func run() async throws {
        guard let target = URL(string: url) else { throw ValidationError("bad --url") }
        // Milliseconds of it become an Int deadline: bounded, so a huge or NaN value cannot trap.
        guard duration.isFinite, duration > 0, duration <= 86_400 else { throw ValidationError("--duration: 0 to 86,400 seconds") }
        switch client {
        case "courier": try await runCourier(target)
        case "ahc":
            try await AHCLoad.run(url: url, concurrency: concurrency, connections: connections, work: work,
                                  insecure: insecure, http2: httpVersion == "2")
        case "urlsession": try await URLSessionLoad.run(url: target, concurrency: concurrency, connections: connections, work: work)
        default: throw ValidationError("--client: courier, ahc or urlsession")
        }
    }

    private var work: ClosedLoop.Work { requests.map { .requests($0) } ?? .seconds(duration) }

    private func runCourier(_ target: URL) async throws {
        var configuration = ServiceActor.Configuration()
        configuration.limits.connections.maxConnectionsPerHost = max(connections, background)
        configuration.limits.connections.maxConcurrentTransfersPerHost = max(100, background, concurrency)
        configuration.limits.connections.maxConcurrentTransfers = max(1024, background + concurrency)
        configuration.transport.loopBackend = backend == "multipoll" ? .multiPoll : .epoll
        configuration.transport.automaticDecompression = false
        configuration.transport.httpVersion = httpVersion == "2" ? .http2 : .http1_1
        if insecure { configuration.transport.tls.verifyPeer = false }
        let request = HTTPRequest(url: target)
        try await withService(configuration: configuration) { service in
            let slow = backgroundURL.map { HTTPRequest(url: URL(string: $0)!) }
            let held = (0..<(slow == nil ? 0 : background)).map { _ in
                Task { _ = try? await service.send(slow!) }
            }
            defer { held.forEach { $0.cancel() } }
            let send: @Sendable () async throws -> Void = {
                let response = try await service.send(request)
                guard response.status == 200 else { throw ValidationError("status \(response.status)") }
            }
            switch pattern {
            case "workers": break
            case "child", "sendall":
                let window = pattern == "child" ? ManyAtOnce.childPerRequest : ManyAtOnce.sendAll
                let run: @Sendable (Int) async throws -> Void = { count in try await window(service, request, concurrency, count) }
                switch executor {
                case "loop": try await withTaskExecutorPreference(service.executor) { try await ManyAtOnce.measure(work: work, run) }
                default: try await ManyAtOnce.measure(work: work, run)
                }
                return
            default: throw ValidationError("--pattern: workers, child or sendall")
            }
            switch executor {
            case "loop":
                try await withTaskExecutorPreference(service.executor) {
                    try await ClosedLoop.measure(concurrency: concurrency, work: work, send)
                }
            case "global":
                // Tasks that cannot inherit anything from the service: a server's request
                // handlers, tasks started before the service existed.
                try await withTaskExecutorPreference(globalConcurrentExecutor) {
                    try await ClosedLoop.measure(concurrency: concurrency, work: work, send)
                }
            default:
                try await ClosedLoop.measure(concurrency: concurrency, work: work, send)
            }
        }
    }
}

/// N tasks, each sending its next request when the last completes: 1 s of warm-up, then the
/// measured window; or exactly N requests with no warm-up. Prints the line `make bench` parses.
enum ClosedLoop {
    enum Work {
        case seconds(Double)
        /// A fixed amount of work, for counts that must not depend on speed (instructions).
        case requests(Int)
    }

    static func measure(concurrency: Int, work: Work, _ send: @escaping @Sendable () async throws -> Void) async throws {
        if case .seconds = work {
            _ = try await drive(concurrency: concurrency, seconds: 1, send) // connections, handles, caches
        }
        let before = Usage.now()
        let count: Int
        switch work {
        case .seconds(let seconds): count = try await drive(concurrency: concurrency, seconds: seconds, send)
        case .requests(let total): count = try await drive(concurrency: concurrency, requests: total, send)
        }
        let after = Usage.now()
        let wall = after.wall - before.wall
        let cpu = (after.cpu - before.cpu) / Double(count) * 1e6
        print(String(format: "requests/s %.0f  cpu-us/request %.1f  peak-rss-MiB %.1f  requests %d  errors 0",
                     Double(count) / wall, cpu, Double(Usage.peakRSSKiB()) / 1024, count))
    }

    static func drive(concurrency: Int, seconds: Double, _ send: @escaping @Sendable () async throws -> Void) async throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var done = 0
                    while ContinuousClock.now < deadline {
                        try await send()
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
    }

    /// Exactly `requests` sends, `concurrency` at a time.
    static func drive(concurrency: Int, requests: Int, _ send: @escaping @Sendable () async throws -> Void) async throws -> Int {
        let issued = IssuedCount()
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<min(concurrency, requests) {
                group.addTask {
                    var done = 0
                    while issued.value.wrappingAdd(1, ordering: .relaxed).oldValue < requests {
                        try await send()
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
    }
}

/// Requests handed out so far, shared by the closed loop's tasks.
final class IssuedCount: Sendable {
    let value = Atomic<Int>(0)
}

/// Wall time, process CPU time (user + system) and peak RSS.
struct Usage {
    var wall: Double
    var cpu: Double

    static func now() -> Usage {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        return Usage(wall: Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9, cpu: cpu)
    }

    static func peakRSSKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }
}
