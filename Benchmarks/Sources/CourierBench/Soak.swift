import ArgumentParser
import Courier
import CourierTestServer
import Foundation
import Synchronization

/// `make soak`: a long mixed load with faults against the test server in another process, with
/// RSS, malloc's bytes in use, descriptors, threads and transfer/handle counts sampled as CSV on stdout.
struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mixed load with faults for minutes; samples resources as CSV.")

    @Option(help: "The test server's base URL (`CourierBench serve`).") var url: String
    @Option(help: "Its raw fault server's base URL.") var faultURL: String
    @Option(help: "Minutes to run.") var minutes = 10.0
    @Option(help: "Operations in flight.") var concurrency = 256
    @Option(help: "Seconds between samples.") var sampleSeconds = 5.0

    /// Shared by the workers and the sampler.
    final class Tally: Sendable {
        let counts = Mutex(Counts())
    }

    struct Counts {
        var ok = 0, expectedFailures = 0, unexpectedFailures = 0
        var lastUnexpected = ""
    }

    func run() async throws {
        let base = URL(string: url)!
        var configuration = ServiceActor.Configuration()
        configuration.queries.rootURL = base
        configuration.limits.connections.maxConnectionsPerHost = 64
        configuration.limits.connections.maxConcurrentTransfersPerHost = 128
        configuration.retry = RetryPolicy(maxRetries: 3, initialDelay: 0.01...0.05, multiplier: 2, maxDelay: .seconds(2))
        configuration.transport.timeouts = Timeouts(connect: .seconds(5), total: .seconds(30), idle: .seconds(5))
        configuration.queries.paging = .fetchAll(maxPages: 20)
        let notes = APIDescription(name: "notes", version: "v1", rootURL: base, servicePath: "notes/v1/")
        let files = APIDescription(name: "files", version: "v1", rootURL: base, servicePath: "files/v1/")
        let faults = ["reset-before-headers", "reset-mid-body", "truncated", "bad-chunked", "stall-headers", "huge-header"]
        let tally = Tally()
        // Unbuffered, so the CSV survives an interrupted run.
        @Sendable func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        emit("seconds,rss_kib,heap_kib,fds,threads,live_transfers,running_transfers,easy_handles,pooled_handles,open_connections,ok,expected_failures,unexpected_failures")
        try await withService(configuration: configuration) { service in
            _ = try await service.send(HTTPRequest(method: .post, url: base.appendingPathComponent("notes/v1/seed").appending(queryItems: [.init(name: "count", value: "50")])))
            let started = ContinuousClock.now
            let deadline = started + .milliseconds(Int(minutes * 60_000))
            let sampler = Task {
                while ContinuousClock.now < deadline, !Task.isCancelled {
                    let stats = await service.stats
                    let elapsed = ContinuousClock.now - started
                    let c = tally.counts.withLock { $0 }
                    emit("\(elapsed.components.seconds),\(Probe.residentKiB()),\(Probe.heapInUseKiB()),\(Probe.descriptors()),\(Probe.threads()),"
                          + "\(stats.liveTransfers),\(stats.runningTransfers),\(stats.easyHandles),\(stats.pooledHandles),"
                          + "\(stats.openConnections),\(c.ok),\(c.expectedFailures),\(c.unexpectedFailures)")
                    try? await Task.sleep(for: .milliseconds(Int(sampleSeconds * 1000)))
                }
            }
            await withTaskExecutorPreference(service.executor) {
                await withTaskGroup(of: Void.self) { group in
                    for worker in 0..<concurrency {
                        group.addTask {
                            var round = worker
                            while ContinuousClock.now < deadline {
                                round += 1
                                let expectFailure = round % 10 == 9
                                do {
                                    switch round % 10 {
                                    case 0...4:
                                        let response = try await service.send(HTTPRequest(url: base.appendingPathComponent("json/1024")))
                                        guard response.status == 200 else { throw ValidationError("status \(response.status)") }
                                    case 5:
                                        var query = Query<GenericObject>(api: notes, name: "notes.get", path: "notes/{id}",
                                                                         pathParameters: ["id": String(format: "note-%04d", round % 50 + 1)])
                                        query.headers["X-Courier-Fault"] = "503x1;run=\(UUID())" // fails once, then retried
                                        _ = try await service.execute(query)
                                    case 6:
                                        var batch = QueryBatch()
                                        for index in 1...5 {
                                            batch.add(Query<GenericObject>(api: notes, name: "notes.get", path: "notes/{id}",
                                                                           pathParameters: ["id": String(format: "note-%04d", index)]))
                                        }
                                        let results = try await service.executeBatch(batch)
                                        if let failure = results.failures.values.first { throw failure }
                                    case 7:
                                        var list = Query<GenericObject>(api: notes, name: "notes.list", path: "notes")
                                        list.parameters.set("maxResults", 10)
                                        _ = try await service.execute(list)
                                    case 8:
                                        var insert = Query<GenericObject>(api: files, name: "files.insert", method: .post, path: "files")
                                        insert.uploadPath = "/upload/files/v1/files"
                                        insert.parameters.set("name", "soak-\(worker)")
                                        insert.parameters.set("sink", 1)
                                        var parameters = UploadParameters(data: Data(repeating: UInt8(round & 0xFF), count: 300_000),
                                                                          mimeType: "application/octet-stream")
                                        parameters.chunkSize = 256 << 10
                                        parameters.verifyIntegrity = false
                                        insert.upload = parameters
                                        _ = try await service.execute(insert)
                                    default:
                                        var request = HTTPRequest(url: URL(string: faultURL)!.appendingPathComponent("soak"))
                                        request.headers["X-Courier-Fault"] = faults[round % faults.count]
                                        _ = try await service.send(request)
                                    }
                                    tally.counts.withLock { if expectFailure { $0.unexpectedFailures += 1 } else { $0.ok += 1 } }
                                } catch {
                                    tally.counts.withLock {
                                        if expectFailure { $0.expectedFailures += 1 } else { $0.unexpectedFailures += 1; $0.lastUnexpected = "\(error)" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            sampler.cancel()
            _ = await sampler.value
            let stats = await service.stats
            let c = tally.counts.withLock { $0 }
            FileHandle.standardError.write(Data("soak: \(c.ok) ok, \(c.expectedFailures) expected failures, \(c.unexpectedFailures) unexpected (last: \(c.lastUnexpected)); at the end \(stats)\n".utf8))
        }
    }
}

extension Probe {
    static func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
}
