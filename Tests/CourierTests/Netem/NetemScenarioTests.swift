@testable import Courier
import CourierTestServer
import Foundation
import CourierSync
import CourierTestSupport
import Testing

/// Scenarios across a shaped link between two network namespaces: latency with jitter, loss,
/// a bandwidth limit and link flaps (Netem/netem.sh builds the link, starts `courier serve` on
/// the far side and runs these in the near one). Without the harness's variables they do not
/// run: `make netem` (every scenario, every profile) and `make test` (the quick set on `wan`)
/// are what run them, and fail loudly where namespaces cannot be made.
@Suite(.enabled(if: NetemLink.current != nil), .serialized)
struct NetemScenarioTests {
    var link: NetemLink { NetemLink.current! }

    func configuration() -> ServiceActor.Configuration {
        var configuration = ServiceActor.Configuration()
        configuration.limits.connections.maxConnectionsPerHost = 64
        return configuration
    }

    /// A resumable upload whose link goes down for two seconds mid-way, and whose connections are
    /// then reset for a second, completes, byte-exact by the server's MD5 and CRC32C.
    @Test func aResumableUploadCompletesAcrossAFlap() async throws {
        let file = try PatternFile(size: link.uploadBytes, name: "netem-\(UUID())")
        defer { file.remove() }
        let expected = try Checksums.of(file: file.url)
        let started = ContinuousClock.now
        try await withCheckedService(configuration: configuration()) { service in
            let retries = RetryCounter(service)
            var parameters = UploadParameters(file: file.url, mimeType: "application/octet-stream")
            parameters.chunkSize = 8 << 20
            let task = service.upload(link.insert(name: "flap-\(UUID()).bin", upload: parameters))
            let link = link
            let resets = LockedValue(0)
            let flapped = Task {
                while task.currentProgress.bytesSent < Int64(link.uploadBytes) * 2 / 5 { try await Task.sleep(for: .milliseconds(20)) }
                try await link.flap(for: .seconds(2))
                while task.currentProgress.bytesSent < Int64(link.uploadBytes) * 11 / 20 { try await Task.sleep(for: .milliseconds(20)) }
                let answered = try await link.resetConnections(for: .seconds(1))
                resets.withLock { $0 = answered }
            }
            let object = try await NetemLink.awaiting(flapped) { try await task.value }
            #expect(await retries.count >= 1, "the reset connection was recovered by a retry (\(resets.withLock { $0 }) packets reset)")
            #expect(object.json["size"]?.stringValue == String(link.uploadBytes))
            #expect(object.json["md5Hash"]?.stringValue == expected.md5Base64)
            #expect(object.json["crc32c"]?.stringValue == expected.crc32cBase64)
            link.record("resumable upload, 2 s flap, 1 s of resets", bytes: link.uploadBytes, retries: await retries.count, since: started,
                        note: "\(resets.withLock { $0 }) packets reset")
        }
    }

    /// A download whose link goes down mid-way, then whose connection is reset, resumes with
    /// Range and ends byte-exact.
    @Test func aDownloadResumesAcrossAFlap() async throws {
        let file = try PatternFile(size: link.downloadBytes, name: "netem-\(UUID())")
        defer { file.remove() }
        let expected = try Checksums.of(file: file.url)
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-netem-\(UUID()).bin")
        defer { try? FileManager.default.removeItem(at: target) }
        try await withCheckedService(configuration: configuration()) { service in
            let stored = try await service.execute(link.insert(name: "download-\(UUID()).bin",
                                                               upload: UploadParameters(file: file.url, mimeType: "application/octet-stream")))
            let id = try #require(stored.json["id"]?.stringValue)
            let retries = RetryCounter(service)
            let started = ContinuousClock.now
            let received = LockedValue<Int64>(0)
            let link = link
            let resets = LockedValue(0)
            let flapped = Task {
                while received.withLock({ $0 }) < Int64(link.downloadBytes) * 2 / 5 { try await Task.sleep(for: .milliseconds(20)) }
                try await link.flap(for: .seconds(2))
                while received.withLock({ $0 }) < Int64(link.downloadBytes) * 11 / 20 { try await Task.sleep(for: .milliseconds(20)) }
                let answered = try await link.resetConnections(for: .seconds(1))
                resets.withLock { $0 = answered }
            }
            let options = DownloadOptions(progress: { progress in received.withLock { $0 = progress.bytesWritten } })
            _ = try await NetemLink.awaiting(flapped) { try await service.downloadFile(link.media(id: id), to: target, options: options) }
            let got = try Checksums.of(file: target)
            #expect(got.byteCount == Int64(link.downloadBytes))
            #expect(got.md5 == expected.md5 && got.crc32c == expected.crc32c, "byte-exact")
            link.record("download, 2 s flap, 1 s of resets", bytes: link.downloadBytes, retries: await retries.count, since: started,
                        note: "\(resets.withLock { $0 }) packets reset")
        }
    }

    /// Many queries, 64 in flight, on a lossy link: no error, and every extra request the server
    /// saw is a retry the events announced.
    @Test func manyQueriesFinishWithEveryRetryAccountedFor() async throws {
        let queries = link.queries
        let link = link
        try await withCheckedService(configuration: configuration()) { service in
            let before = try await link.serverRequests(service)
            let retries = RetryCounter(service)
            let started = ContinuousClock.now
            let next = LockedValue(0)
            let failures = LockedValue<[String]>([])
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        while next.withLock({ value -> Int in value += 1; return value - 1 }) < queries {
                            do {
                                let response = try await service.send(HTTPRequest(url: link.url("/json/256")))
                                if response.status != 200 { failures.withLock { $0.append("status \(response.status)") } }
                            } catch {
                                failures.withLock { $0.append("\(error)") }
                            }
                        }
                    }
                }
            }
            let retried = await retries.count
            let seen = try await link.serverRequests(service) - before - 1 // less the second count itself
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
            #expect(seen >= queries && seen - queries <= retried, "\(seen) requests seen for \(queries) queries and \(retried) retries")
            link.record("\(queries) queries, 64 in flight", bytes: queries * 256, retries: retried, since: started)
        }
    }

    /// Cancelling 200 requests in flight ends every one of them promptly, on any link.
    @Test func aCancelStormEndsEveryTaskPromptly() async throws {
        let link = link
        try await withCheckedService(configuration: configuration()) { service in
            let started = ContinuousClock.now
            let ended = LockedValue<[Duration]>([])
            let group = Task {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<200 {
                        group.addTask {
                            _ = try? await service.send(HTTPRequest(url: link.url("/delay/10000")))
                            let now = ContinuousClock.now
                            ended.withLock { $0.append(now - started) }
                        }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            let cancelled = ContinuousClock.now
            group.cancel()
            await group.value
            let slowest = ContinuousClock.now - cancelled
            #expect(ended.withLock { $0.count } == 200)
            #expect(slowest < .seconds(1), "the last cancelled task ended \(slowest) after the cancel")
            link.record("cancel storm, 200 in flight", bytes: 0, retries: 0, since: started, note: "last ended \(slowest.formatted(.units(allowed: [.milliseconds])))")
        }
    }

    /// A total timeout fires when configured, not before (jitter must not trip it) and not never.
    @Test func timeoutsFireAsConfigured() async throws {
        try await withCheckedService(configuration: configuration()) { service in
            var slow = HTTPRequest(url: link.url("/delay/1000"))
            slow.timeouts = Timeouts(total: .seconds(5))
            let ok = try await service.send(slow)
            #expect(ok.status == 200, "a second's answer fits in five seconds, jitter, loss and a lost SYN or two included")

            var stalled = HTTPRequest(url: link.url("/stall?bytes=100&seconds=20"))
            stalled.timeouts = Timeouts(total: .milliseconds(1500))
            let started = ContinuousClock.now
            await #expect(throws: TransportError.self) { _ = try await service.send(stalled) }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(1500) && elapsed < .milliseconds(2500), "fired after \(elapsed)")
            link.record("timeouts", bytes: 0, retries: 0, since: started, note: "1.5 s fired after \(elapsed.formatted(.units(allowed: [.milliseconds])))")
        }
    }
}

extension NetemScenarioTests {
    /// HTTP/2 through nginx (TLS) on one connection: while one stream is stalled upstream, the
    /// others on the same connection keep flowing.
    @Test func http2StreamsFlowWhileOneStalls() async throws {
        let link = link
        var configuration = configuration()
        configuration.transport.httpVersion = .http2
        configuration.transport.tls.verifyPeer = false
        configuration.limits.connections.maxConnectionsPerHost = 1
        try await withCheckedService(configuration: configuration) { service in
            let first = try await service.send(HTTPRequest(url: link.tls("/json/1024")))
            #expect(first.status == 200 && first.body.count == 1024)
            let stalledEnded = LockedValue(false)
            let stalled = Task {
                _ = try? await service.send(HTTPRequest(url: link.tls("/stall?bytes=1000&seconds=30")))
                stalledEnded.withLock { $0 = true }
            }
            try await Task.sleep(for: .milliseconds(500))
            let started = ContinuousClock.now
            let bytes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let response = try await service.send(HTTPRequest(url: link.tls("/json/1024")))
                        guard response.status == 200 else { throw NetemError(message: "status \(response.status)") }
                        return response.body.count
                    }
                }
                return try await group.reduce(0, +)
            }
            let elapsed = ContinuousClock.now - started
            #expect(bytes == 100 * 1024)
            #expect(!stalledEnded.withLock { $0 }, "the stalled stream is still stalled: the others went past it")
            #expect(elapsed < .seconds(10), "100 streams took \(elapsed) beside a stalled one")
            stalled.cancel()
            await stalled.value
            link.record("HTTP/2: 100 streams beside a stalled one", bytes: bytes, retries: 0, since: started,
                        note: "\(elapsed.formatted(.units(allowed: [.milliseconds])))")
        }
    }
}

/// Counts `.retrying` events from now on.
final class RetryCounter: Sendable {
    private let counted: LockedValue<Int>
    private let task: Task<Void, Never>

    init(_ service: ServiceActor) {
        let events = service.events
        let counted = LockedValue(0)
        self.counted = counted
        task = Task {
            for await event in events {
                if case .retrying = event { counted.withLock { $0 += 1 } }
            }
        }
    }

    /// The retries so far (after letting events already sent arrive).
    var count: Int {
        get async {
            try? await Task.sleep(for: .milliseconds(50))
            return counted.withLock { $0 }
        }
    }

    deinit { task.cancel() }
}

/// The shaped link the harness built, from its environment.
struct NetemLink: Sendable {
    /// `courier serve` on the far side.
    let server: URL
    /// nginx on the far side: TLS and HTTP/2, proxying to `server` (static `/json/1024`).
    let tlsServer: URL
    /// fake-gcs-server on the far side: Cloud Storage's JSON API.
    let storage: URL?
    let profile: String
    /// The near side's device, which `flap` takes down and up.
    let device: String
    /// The far side's namespace, where `resetConnections` adds its rule.
    let farNamespace: String
    let uploadBytes: Int
    let downloadBytes: Int
    let queries: Int
    let results: String?

    static let current: NetemLink? = {
        let environment = ProcessInfo.processInfo.environment
        guard let server = environment["COURIER_NETEM_SERVER"].flatMap(URL.init(string:)),
              let tlsServer = environment["COURIER_NETEM_TLS"].flatMap(URL.init(string:)),
              let device = environment["COURIER_NETEM_DEVICE"],
              let farNamespace = environment["COURIER_NETEM_FAR_NAMESPACE"] else { return nil }
        func number(_ name: String, _ fallback: Int) -> Int { environment[name].flatMap(Int.init) ?? fallback }
        return NetemLink(server: server, tlsServer: tlsServer, storage: environment["COURIER_NETEM_GCS"].flatMap(URL.init(string:)),
                         profile: environment["COURIER_NETEM_PROFILE"] ?? "?", device: device,
                         farNamespace: farNamespace,
                         uploadBytes: number("COURIER_NETEM_UPLOAD_MIB", 64) << 20,
                         downloadBytes: number("COURIER_NETEM_DOWNLOAD_MIB", 64) << 20,
                         queries: number("COURIER_NETEM_QUERIES", 10_000), results: environment["COURIER_NETEM_RESULTS"])
    }()

    func url(_ path: String) -> URL { URL(string: server.absoluteString + path)! }
    func tls(_ path: String) -> URL { URL(string: tlsServer.absoluteString + path)! }

    func insert(name: String, upload: UploadParameters) -> Query<GenericObject> { Files.insert(server, name: name, upload: upload) }

    func media(id: String) -> Query<MediaData> { Files.media(server, id: id) }

    /// Requests the far server has started so far (this one included).
    func serverRequests(_ service: ServiceActor) async throws -> Int {
        let response = try await service.send(HTTPRequest(url: url("/counters")))
        let object = try JSONValue(parsing: response.body)
        return try #require(object["requests"]?.intValue)
    }

    /// Takes the near side's link down for `duration`, then up again (routes come back with it).
    func flap(for duration: Duration) async throws {
        try await ip(["link", "set", "dev", device, "down"])
        try? await Task.sleep(for: duration) // cancelled or not, the link comes back up
        try await ip(["link", "set", "dev", device, "up"])
    }

    /// For `duration`, the far side answers every packet to `courier serve` (or to `port`) with a
    /// TCP reset (nftables there), as a middlebox that drops connections would.
    ///
    /// The rule stays past `duration` until it has answered at least one packet (for at most
    /// `atMost`), and returns how many it answered. A rule that saw no packet leaves the scenario
    /// without the reset it claims: a CI run's upload across the flap ended with no retry, and
    /// a connection can be silent for a second (retransmission back-off after a flap).
    @discardableResult
    func resetConnections(port: Int? = nil, for duration: Duration, atMost limit: Duration = .seconds(15)) async throws -> Int {
        let port = port ?? server.port ?? 80
        // One nft run, one transaction: the rule is in as soon as the call returns.
        try await ip(["netns", "exec", farNamespace, "nft", """
            add table inet courier_resets; \
            add chain inet courier_resets in { type filter hook input priority 0 ; policy accept ; }; \
            add rule inet courier_resets in tcp dport \(port) counter reject with tcp reset
            """])
        let started = ContinuousClock.now
        var answered = 0
        var failure: (any Error)?
        do {
            try await Task.sleep(for: duration)
            answered = try await resetsAnswered()
            while answered == 0, ContinuousClock.now - started < limit {
                try await Task.sleep(for: .milliseconds(50))
                answered = try await resetsAnswered()
            }
        } catch is CancellationError {
        } catch {
            failure = error
        }
        // Cancelled or not, the rule goes.
        try await ip(["netns", "exec", farNamespace, "nft", "delete table inet courier_resets"])
        if let failure { throw failure }
        return answered
    }

    /// The packets `resetConnections`' rule has answered so far (its nftables counter).
    private func resetsAnswered() async throws -> Int {
        let run = try await runProcess(URL(fileURLWithPath: "/usr/sbin/ip"),
                                       ["netns", "exec", farNamespace, "nft", "list", "table", "inet", "courier_resets"],
                                       timeout: 10, record: false)
        guard run.status == 0 else { throw NetemError(message: "nft list table inet courier_resets: \(run.error)") }
        let listing = String(decoding: run.output, as: UTF8.self)
        guard let range = listing.range(of: #"counter packets (\d+)"#, options: .regularExpression),
              let packets = Int(listing[range].split(separator: " ").last ?? "") else {
            throw NetemError(message: "no counter in: \(listing)")
        }
        return packets
    }

    private func ip(_ arguments: [String]) async throws {
        let run = try await runProcess(URL(fileURLWithPath: "/usr/sbin/ip"), arguments, timeout: 10, record: false)
        guard run.status == 0 else { throw NetemError(message: "ip \(arguments.joined(separator: " ")): \(run.error)") }
    }

    /// Runs `transfer` while `disruptions` (flaps, resets) play out. A transfer that fails ends the
    /// disruptions (a flapped link comes back up, a reset rule goes) before its error is thrown,
    /// so the next scenario starts on a clean link.
    static func awaiting<T: Sendable>(_ disruptions: Task<Void, any Error>, _ transfer: () async throws -> T) async throws -> T {
        do {
            let value = try await transfer()
            try await disruptions.value
            return value
        } catch {
            disruptions.cancel()
            _ = await disruptions.result
            throw error
        }
    }

    /// One line of the harness's table: what the scenario moved, retried, and how long it took.
    func record(_ scenario: String, bytes: Int, retries: Int, since start: ContinuousClock.Instant, note: String = "") {
        guard let results else { return }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let line = "\(profile)\t\(scenario)\t\(bytes)\t\(retries)\t\(String(format: "%.1f", seconds))\t\(note)\n"
        if let handle = FileHandle(forWritingAtPath: results) {
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: Data(line.utf8))
            try? handle.close()
        }
    }
}

struct NetemError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
