import Benchmark
import Courier
import CourierTestServer
import Foundation

// `swift package benchmark` (from Benchmarks/): regression benchmarks for the hot paths.
//
// Targets come from COURIER_BENCH_URL when set (an nginx or `courier serve` in another process,
// so the server's work is not counted); otherwise an in-process test server, whose CPU and
// allocations then appear in the figures too. Batches and uploads always use the test server,
// which has the batch and upload endpoints.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
        warmupIterations: 2,
        maxDuration: .seconds(5),
        maxIterations: 50
    )

    // Concurrent queries: each iteration completes `requestsPerIteration` requests with `inFlight` in flight.
    for inFlight in [1, 64, 1024] {
        let requests = inFlight == 1 ? 200 : 4096
        Benchmark("send, \(inFlight) in flight", configuration: .init(scalingFactor: .one)) { benchmark in
            let target = try await Fixture.shared.target()
            let request = HTTPRequest(url: target.json1K)
            benchmark.startMeasurement()
            try await Fixture.drive(target.service, inFlight: inFlight, total: requests) {
                let response = try await target.service.send(request)
                precondition(response.status == 200)
            }
            benchmark.stopMeasurement()
        }
        Benchmark("execute (typed), \(inFlight) in flight") { benchmark in
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

    // JSON: a 1.4 MB collection of 2,000 objects, as parsed values and as typed objects.
    let document = Fixture.collection(items: 2_000)
    Benchmark("JSON parse 1.4 MB (JSONValue)", configuration: .init(metrics: [.throughput, .wallClock, .mallocCountTotal])) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try JSONValue(parsing: document)) }
    }
    Benchmark("JSON decode 1.4 MB (typed APICollection)", configuration: .init(metrics: [.throughput, .wallClock, .mallocCountTotal])) { benchmark in
        let response = HTTPResponse(status: 200, body: document, url: URL(string: "http://127.0.0.1/")!)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let list = try SampleList.decode(from: response, limits: .default)
            blackHole(list.items.reduce(0) { $0 + ($1.kind?.count ?? 0) })
        }
    }
    Benchmark("JSON serialize 1.4 MB", configuration: .init(metrics: [.throughput, .wallClock, .mallocCountTotal])) { benchmark in
        let value = try JSONValue(parsing: document)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(value.serialized()) }
    }

    // Batches: 100 GETs as one multipart wire batch, and as a task-group batch.
    Benchmark("wire batch, 100 GETs") { benchmark in
        let notes = try await Fixture.shared.notes()
        benchmark.startMeasurement()
        let results = try await notes.service.executeBatch(notes.batch())
        precondition(results.failures.isEmpty)
    }
    Benchmark("task-group batch, 100 GETs") { benchmark in
        let notes = try await Fixture.shared.notes()
        benchmark.startMeasurement()
        let results = try await notes.service.batch(notes.batch())
        precondition(results.failures.isEmpty)
    }

    // Uploads: 64 MiB from memory, resumable in 8 MiB chunks, to a sink that counts bytes.
    Benchmark("resumable upload, 64 MiB", configuration: .init(metrics: [.throughput, .wallClock, .cpuTotal, .peakMemoryResident],
                                                                 maxIterations: 10)) { benchmark in
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
