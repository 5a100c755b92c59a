import Benchmark
import Courier
import CourierTestServer
import Foundation

// `swift package benchmark` (from Benchmarks/): regression benchmarks for the hot paths, the
// same cases as `make bench`. `make bench-check` runs them against nginx and fails on a
// regression past the thresholds below, measured against the p90 figures kept in Thresholds/.
//
// Targets come from COURIER_BENCH_URL / COURIER_BENCH_TLS_URL when set (nginx in another
// process, so the server's work is not counted); otherwise an in-process test server, whose CPU
// and allocations then appear in the figures too, and no TLS cases. Batches, uploads and the
// many-in-flight case use the test server, which has those endpoints: COURIER_BENCH_SERVER_URL
// (`CourierBench serve` in another process, as `make bench-check` runs it) or one in this process.
//
// Names have no spaces or slashes: package-benchmark 1.38.1 writes threshold files under a
// name with those replaced by underscores, but reads them back under the name as given, so a
// benchmark named with a space is never checked.

/// What fails `thresholds check`, measured against two runs of unchanged code a minute apart.
///
/// - Allocations are nearly deterministic per request: the runs differed by 0.01–0.05 % for
///   `send`, while one more allocation per request adds 2.1–2.2 % to `send` and `execute` at 1
///   and 64 in flight. So 1.5 %. (A test server inside the benchmark's process moved a wire
///   batch's count by over 1.5 %; `make bench-check` runs it in a process of its own.)
/// - CPU moves ±30 % between runs on a shared 2-core machine, so its bound catches a doubling,
///   not a few percent: the noise-free figure for small regressions is `make instructions`.
/// - Voluntary context switches (package-benchmark does not read them on Linux, so the suite
///   counts them itself, per 1,000 requests) get an absolute bound: a new thread hop on the
///   request path adds about 1,000 per 1,000 requests one at a time, and the loop's figure at
///   64 in flight is under 20, which no relative bound can guard. Ordinary tasks with many in
///   flight park and wake pool threads as the scheduler pleases (145 to 678 per 1,000 requests
///   in three runs of unchanged code), so there the bound only catches a request that parks a
///   thread every time. Their allocations move too (the task allocator's slabs and the pool's
///   continuations follow the parking): 1.8 % between two runs of unchanged code at 1,024 in
///   flight, so 4 % there. One more allocation per request is 0.9 % of that figure, which the
///   same suites at 1 and 64 in flight catch.
func thresholds(_ metrics: [BenchmarkMetric] = [.mallocCountTotal, .cpuTotal],
                switches: Int = 300, allocations: Double = 1.5) -> [BenchmarkMetric: BenchmarkThresholds] {
    let all: [BenchmarkMetric: BenchmarkThresholds] = [
        .mallocCountTotal: .init(relative: [.p90: allocations]), .cpuTotal: .init(relative: [.p90: 100.0]),
        Fixture.contextSwitches: .init(absolute: [.p90: switches]),
    ]
    return all.filter { metrics.contains($0.key) }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 2,
        maxDuration: .seconds(5),
        maxIterations: 50,
        thresholds: thresholds()
    )

    // Concurrent queries: each iteration completes `requests` requests with `inFlight` in flight,
    // from tasks on the loop (the executor preference) and from ordinary tasks (global executor).
    for inFlight in [1, 64, 1024] {
        let requests = inFlight == 1 ? 200 : 4096
        for executor in Fixture.Executor.allCases {
            let name = executor == .loop ? "send-\(inFlight)-in-flight" : "send-from-ordinary-tasks-\(inFlight)-in-flight"
            let metrics: [BenchmarkMetric] = [.mallocCountTotal, .cpuTotal, Fixture.contextSwitches]
            Benchmark(name, configuration: .init(metrics: Benchmark.defaultConfiguration.metrics + [Fixture.contextSwitches],
                                                 scalingFactor: .one,
                                                 thresholds: thresholds(metrics, switches: executor == .loop || inFlight == 1 ? 300 : 1000,
                                                                        allocations: executor == .loop || inFlight < 1024 ? 1.5 : 4))) { benchmark in
                let target = try await Fixture.shared.target()
                let request = HTTPRequest(url: target.json1K)
                let switches = ContextSwitches()
                benchmark.startMeasurement()
                try await Fixture.drive(target.service, inFlight: inFlight, total: requests, on: executor) {
                    let response = try await target.service.send(request)
                    precondition(response.status == 200)
                }
                benchmark.stopMeasurement()
                benchmark.measurement(Fixture.contextSwitches, switches.perThousand(requests))
            }
        }
        Benchmark("execute-typed-\(inFlight)-in-flight") { benchmark in
            let target = try await Fixture.shared.target()
            let query = Query<Sample>(api: target.api, name: "sample.get", path: "json/1024")
            benchmark.startMeasurement()
            try await Fixture.drive(target.service, inFlight: inFlight, total: requests) {
                let sample = try await target.service.execute(query)
                precondition(sample.kind == "courier#sample")
            }
            benchmark.stopMeasurement()
        }
    }

    // HTTPS/1.1 (a connection per request in flight) and HTTP/2 (every stream on one connection).
    for http2 in [false, true] {
        Benchmark(http2 ? "send-HTTP2-64-streams-on-one-connection" : "send-HTTPS1.1-64-in-flight") { benchmark in
            guard let target = try await Fixture.shared.tlsTarget(http2: http2) else { return } // no TLS server given
            let request = HTTPRequest(url: target.url)
            benchmark.startMeasurement()
            try await Fixture.drive(target.service, inFlight: 64, total: 4096) {
                let response = try await target.service.send(request)
                precondition(response.status == 200)
            }
            benchmark.stopMeasurement()
        }
    }

    // Many queries in flight: 10,000 at once in one task group against a route that answers after
    // 200 ms, on 1,000 connections (the rest wait in the admission queue). `make bench` runs
    // 100,000 in its own process; this keeps the per-query memory and allocations in check.
    Benchmark("10000-queries-in-flight", configuration: .init(maxDuration: .seconds(20), maxIterations: 5)) { benchmark in
        let target = try await Fixture.shared.slowTarget(milliseconds: 200)
        let request = HTTPRequest(url: target.url)
        benchmark.startMeasurement()
        try await Fixture.drive(target.service, inFlight: 10_000, total: 10_000, on: .global) {
            let response = try await target.service.send(request)
            precondition(response.status == 200)
        }
        benchmark.stopMeasurement()
    }

    // JSON: a 1.4 MB collection of 2,000 objects, as parsed values and as typed objects.
    let document = Fixture.collection(items: 2_000)
    Benchmark("JSON-parse-1.4MB-JSONValue", configuration: .init(metrics: [.throughput, .wallClock, .mallocCountTotal],
                                                                          thresholds: thresholds([.mallocCountTotal]))) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSONValue(parsing: document)) }
    }
    Benchmark("JSON-decode-1.4MB-typed-APICollection", configuration: .init(metrics: [.throughput, .wallClock, .mallocCountTotal],
                                                                          thresholds: thresholds([.mallocCountTotal]))) { benchmark in
        let response = HTTPResponse(status: 200, body: document, url: URL(string: "http://127.0.0.1/")!)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let list = try SampleList.decode(from: response, limits: .default)
            blackHole(list.items.reduce(0) { $0 + ($1.kind?.count ?? 0) })
        }
    }
    Benchmark("JSON-serialize-1.4MB", configuration: .init(metrics: [.throughput, .wallClock, .mallocCountTotal],
                                                                          thresholds: thresholds([.mallocCountTotal]))) { benchmark in
        let value = try JSONValue(parsing: document)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(value.serialized()) }
    }

    // Batches: 100 GETs as one multipart wire batch, and as a task-group batch.
    Benchmark("wire-batch-100-GETs") { benchmark in
        let notes = try await Fixture.shared.notes()
        benchmark.startMeasurement()
        let results = try await notes.service.executeBatch(notes.batch())
        precondition(results.failures.isEmpty)
    }
    Benchmark("task-group-batch-100-GETs") { benchmark in
        let notes = try await Fixture.shared.notes()
        benchmark.startMeasurement()
        let results = try await notes.service.batch(notes.batch())
        precondition(results.failures.isEmpty)
    }

    // Uploads: 64 MiB from memory, resumable in 8 MiB chunks, to a sink that counts bytes.
    Benchmark("resumable-upload-64MiB", configuration: .init(metrics: [.throughput, .wallClock, .cpuTotal, .peakMemoryResident],
                                                                 maxIterations: 10, thresholds: thresholds([.cpuTotal]))) { benchmark in
        let notes = try await Fixture.shared.notes()
        let payload = Fixture.payload
        benchmark.startMeasurement()
        var query = Query<GenericObject>(api: notes.files, name: "files.insert", method: .post, path: "files")
        query.uploadPath = "/upload/files/v1/files"
        query.parameters.set("name", "bench")
        query.parameters.set("sink", 1)
        query.upload = UploadParameters(data: payload, mimeType: "application/octet-stream")
        _ = try await notes.service.execute(query)
    }
}
