import Courier
@testable import CourierCommands
import CourierLoad
import CourierTestServer
import Foundation
import GoogleStorage
import CourierTestSupport
import Testing

/// A run split the way a Kubernetes Indexed Job splits it: N `courier load` processes with
/// `--shards N` and `JOB_COMPLETION_INDEX`, writing to a bucket (fake-gcs-server), merged from
/// `gs://`, and compared with one process running the same load.
@Suite struct ShardedLoadTests {
    static let shards = 4

    @Test func shardsInABucketMergeIntoExactlyTheWholeRun() async throws {
        try await withFakeGCS { gcs in
            try await withTestServer { server in
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-shards-\(UUID())")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let scenario = directory.appendingPathComponent("mix.json")
                try Data("""
                    [{"name": "small", "url": "\(server.url("/json/64").absoluteString)", "weight": 3},
                     {"name": "unavailable", "url": "\(server.url("/status/503").absoluteString)", "weight": 1},
                     {"name": "echo", "method": "POST", "url": "\(server.url("/echo").absoluteString)", "body": "{}", "weight": 1}]
                    """.utf8).write(to: scenario)
                var storage = ServiceActor.Configuration.suite()
                storage.queries.rootURL = gcs.baseURL
                try await withCheckedService(configuration: storage) { service in
                    var bucket = GoogleStorage.Bucket()
                    bucket.name = "results"
                    _ = try await service.execute(Storage.Buckets.insert(bucket, project: "test"))
                }
                let environment = ["STORAGE_EMULATOR_HOST": "127.0.0.1:\(gcs.port)"]
                let load = ["load", "--scenario", scenario.path, "-c", "8", "-n", "600", "--rate", "600"]

                // The Job's pods, all at once.
                let before = server.counters.requests
                let runs = try await withThrowingTaskGroup(of: (Int, Int32, String).self) { group in
                    for index in 0..<Self.shards {
                        group.addTask {
                            let run = try await runProcess(LoadCommandTests.courier, load + [
                                "--shards", "\(Self.shards)", "--output", "gs://results/run-1/",
                                "--output", directory.appendingPathComponent("shard-\(index).json").path,
                            ], timeout: 120, environment: environment.merging(["JOB_COMPLETION_INDEX": "\(index)"]) { $1 })
                            return (index, run.status, run.error)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                for (index, status, error) in runs { #expect(status == 0, "shard \(index): \(error)") }
                #expect(server.counters.requests - before == 600, "the server saw the whole run's requests, once each")

                // Merged from the bucket, judged and drawn.
                let report = directory.appendingPathComponent("run-1.html")
                let merge = try await runProcess(LoadCommandTests.courier, [
                    "load", "merge", "gs://results/run-1/", "--json", "--threshold", "errors<25%", "--threshold", "unavailable:errors>99%",
                    "--report", report.path,
                ], timeout: 120, environment: environment)
                #expect(merge.status == 0, "\(merge.error)")
                let merged = try LoadResult.decode(merge.output)
                #expect(merged.requests == 600 && merged.runs == Self.shards && merged.shard == nil)
                #expect(merged.concurrency == 8 && merged.rate == 600 && merged.model == .open)
                #expect(merged.thresholds.map(\.passed) == [true, true])
                #expect(merged.timeline?.intervals.map(\.requests).reduce(0, +) == 600)
                #expect(try String(contentsOf: report, encoding: .utf8).contains("<svg class=\"chart\""))

                // The same as merging the shards' local files: the bucket lost and changed nothing.
                let locals = try (0..<Self.shards).map {
                    try LoadResult.decode(Data(contentsOf: directory.appendingPathComponent("shard-\($0).json")))
                }
                let local = try #require(try LoadResult.mergedShards(locals))
                #expect(merged.latency == local.latency)
                #expect(merged.endpoints == local.endpoints && merged.statusCodes == local.statusCodes)
                #expect(merged.timeline == local.timeline)
                // Merged percentiles are those of all requests: never outside the shards' own.
                for percentile in [50.0, 99.0] {
                    let parts = locals.map { $0.latency.value(atPercentile: percentile) }
                    #expect((parts.min()!...parts.max()!).contains(merged.latency.value(atPercentile: percentile)))
                }

                // One process running the same load sends exactly the same mix.
                let single = try await runProcess(LoadCommandTests.courier, load + ["--json"], timeout: 120)
                #expect(single.status == 0, "\(single.error)")
                let whole = try LoadResult.decode(single.output)
                #expect(whole.requests == merged.requests && whole.errors == merged.errors)
                #expect(whole.target == merged.target, "each URL once")
                #expect(whole.statusCodes == merged.statusCodes)
                #expect(whole.endpoints.mapValues(\.requests) == merged.endpoints.mapValues(\.requests))
                #expect(merged.endpoints["unavailable"]?.requests == 120 && merged.errors == 120)

                // A shard that never arrived fails the merge by name.
                try await withCheckedService(configuration: storage) { service in
                    _ = try await service.execute(Storage.Objects.delete(bucket: "results", object: "run-1/shard-0002-of-0004.json"))
                }
                let partial = try await runProcess(LoadCommandTests.courier, ["load", "merge", "gs://results/run-1/"],
                                                   timeout: 120, environment: environment)
                #expect(partial.status == 64)
                #expect(partial.error.contains("shard 2/4 is missing"), "\(partial.error)")
            }
        }
    }

    /// deploy/load-job.yaml's container arguments are ones `courier load` accepts, and make pod 7
    /// shard 7 of the Job's completions (the schemas are checked by Scripts/deploy-check.sh).
    @Test func theJobManifestsArgumentsParse() throws {
        let root = Repository.root
        let manifest = try String(contentsOf: root.appendingPathComponent("deploy/load-job.yaml"), encoding: .utf8)
        let lines = manifest.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "args:" })
        let arguments = lines[(start + 1)...].prefix { $0.trimmingCharacters(in: .whitespaces).hasPrefix("- ") }
            .map { String($0.trimmingCharacters(in: .whitespaces).dropFirst(2)) }
            .map { $0.replacingOccurrences(of: "${START_AT}", with: "2026-11-24T10:00:00Z").replacingOccurrences(of: "${RUN_ID}", with: "r1") }
        #expect(arguments.first == "load")
        let completions = try #require(lines.first { $0.contains("completions:") }?.split(separator: ":").last)
        let command = try LoadRunCommand.parse(Array(arguments.dropFirst()))
        try command.validate()
        let options = try command.makeOptions(environment: ["JOB_COMPLETION_INDEX": "7"])
        #expect(options.shard == (try LoadShard(index: 7, count: Int(completions.trimmingCharacters(in: .whitespaces))!)))
        #expect(try command.startTime() == ISO8601DateFormatter().date(from: "2026-11-24T10:00:00Z"))
        // The live metrics listen where the pod's declared port and the scrape annotation say.
        #expect(command.metricsPort == 9464 && command.metricsHost == "0.0.0.0")
        #expect(manifest.contains("containerPort: 9464") && manifest.contains("prometheus.io/port: \"9464\""))
    }

    /// A store that refuses the result (here a server with no Storage API: a 404) fails the run
    /// after it, but the result is not lost: the JSON goes to stdout, a pod's log.
    @Test func aResultTheBucketRefusesIsPrintedNotLost() async throws {
        try await withTestServer { server in
            let host = "127.0.0.1:\(server.baseURL.port!)"
            let run = try await runProcess(LoadCommandTests.courier, [
                "load", server.url("/json/64").absoluteString, "-c", "2", "-n", "50", "--shard", "1/2",
                "--output", "gs://results/lost/",
            ], timeout: 120, environment: ["STORAGE_EMULATOR_HOST": host])
            #expect(run.status == 64)
            #expect(run.error.contains("cannot write gs://results/lost/"))
            let text = String(decoding: run.output, as: UTF8.self)
            let json = try #require(text.range(of: "\n}\n").map { String(text[..<$0.upperBound]) })
            let result = try LoadResult.decode(Data(json.utf8))
            let expected = try LoadShard(index: 1, count: 2)
            #expect(result.requests == 25 && result.shard == expected)
            #expect(text.contains("Requests/sec:"), "the summary follows")
        }
    }

    @Test func aJobIndexIsNeededForShards() async throws {
        // Outside a Job (this test process has no JOB_COMPLETION_INDEX), --shards has no index to take.
        let run = try await runProcess(LoadCommandTests.courier, ["load", "http://127.0.0.1:9/", "--shards", "4"], timeout: 60)
        #expect(run.status == 64)
        #expect(run.error.contains("JOB_COMPLETION_INDEX"))
        let both = try await runProcess(LoadCommandTests.courier, ["load", "http://127.0.0.1:9/", "--shard", "1/4", "-c", "2"], timeout: 60)
        #expect(both.status == 64)
        #expect(both.error.contains("cannot be split over 4 shards"))
        let object = try await runProcess(LoadCommandTests.courier, ["load", "http://127.0.0.1:9/", "--shard", "1/4",
                                                                     "--output", "gs://bucket/one.json"], timeout: 60)
        #expect(object.status == 64)
        #expect(object.error.contains("gs:// folder"))
    }
}
