import ArgumentParser
import Courier
import CourierLoad
import CourierTestServer
import Foundation

/// `courier load [<url>]`: the load test itself.
public struct LoadRunCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Load a URL (or a scenario) and print a wrk-style summary.",
        discussion: """
            Closed model by default: --concurrency requests in flight, each followed at once by the \
            next. With --rate, the open model: requests start at that constant rate and latency counts \
            from each one's intended start, so a stalling server cannot hide its queue (as in wrk2). \
            With --stage, the load ramps (as k6's ramping executors do): each stage moves the rate \
            (30s:100/s) or the requests in flight (1m:200) in a straight line to its target, and the \
            run lasts the stages' total length.

            Examples:
              courier load http://127.0.0.1:8080/api -c 64 -d 30s
              courier load http://127.0.0.1:8080/api --rate 2000 -d 1m --threshold 'p99<50ms'
              courier load --scenario mix.json -c 100 -n 100000 --json > result.json
              courier load http://127.0.0.1:8080/api -c 500 --stage 30s:100/s --stage 2m:1000/s --stage 30s:0/s
              courier load https://api.example.com/ --rate 20000 -d 5m --shards 20 --output gs://bucket/run-1/

            Sharded: --shard i/n, or --shards n in a Kubernetes Indexed Job (the index from \
            JOB_COMPLETION_INDEX). The shards together send exactly what one process would: the \
            request count, the scenario mix and the open model's schedule are dealt round-robin. \
            `courier load merge gs://bucket/run-1/` merges them, checking that every shard is there.
            """
    )

    @Argument(help: "The URL to load. Without it (and without --scenario), the embedded test server is started and loaded.")
    var url: String?

    @Option(name: .shortAndLong, help: "Requests in flight at once (the closed model), or at most (the open model).")
    var concurrency = 64

    @Option(help: "Connections per host (default: one per request in flight; with --http2, one per 100).")
    var connections: Int?

    @Option(name: .shortAndLong, help: "How long to load, after the warm-up: 10s, 2m, 1m30s (default 10s); with -n, at most this long.")
    var duration: String?

    @Option(name: [.customShort("n"), .long], help: "Send this many requests instead of loading for a duration (with -d: whichever comes first).")
    var requests: Int?

    @Option(help: "The open model: start this many requests per second, whatever the server does.")
    var rate: Double?

    @Option(name: .customLong("stage"), help: ArgumentHelp(
        "A stage of a ramp, repeatable: LENGTH:RATE/s ramps the open model's arrival rate (from --rate, or 0), LENGTH:N the closed model's requests in flight (from 0), in a straight line to the target over the length.",
        valueName: "length:target"))
    var stages: [String] = []

    @Option(help: "Load this long first without recording (connections open, caches fill).")
    var warmup = "0s"

    @Option(name: .shortAndLong, help: "The HTTP method.")
    var method = "GET"

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, \"Name: value\"; repeatable.")
    var headers: [String] = []

    @Option(help: "The request body.")
    var body: String?

    @Option(help: "A file whose contents are the request body.")
    var bodyFile: String?

    @Flag(help: "Use HTTP/2 (ALPN over TLS, prior knowledge over plain http).")
    var http2 = false

    @Option(help: "Each request's deadline.")
    var timeout = "30s"

    @Flag(name: [.customShort("k"), .long], help: "Skip TLS certificate verification (test servers only).")
    var insecure = false

    @Option(help: "Send \"Authorization: Bearer <token>\". The COURIER_BEARER_TOKEN variable keeps it out of `ps`.")
    var authBearer: String?

    @Option(help: "A Google service-account key file (JSON); its access token is fetched once and refreshed.")
    var serviceAccountKey: String?

    @Option(help: "An OAuth scope for --service-account-key; repeatable.")
    var scope: [String] = []

    @Option(help: ArgumentHelp(
        "A CSV file with a header row (or NDJSON, .ndjson/.jsonl) whose columns fill {{column}} placeholders in the URL, headers and body; built-ins: {{uuid}}, {{seq}}, {{randomInt 1 1000}}, {{now}}.",
        valueName: "file"))
    var data: String?

    @Option(help: "Which row each request takes: sequential (in order, starting over), random, or unique (one each; the run ends when they run out).")
    var dataMode = "sequential"

    @Option(help: ArgumentHelp(
        "A JSON file listing weighted requests and user flows (Docs/LoadTesting.md).",
        discussion: """
        A request: {"name", "method", "url", "headers", "body", "weight", "checks"}. A flow: {"name", "weight", \
        "flow": [steps]}, each step a request that may "extract" values from its response (json:$.path, \
        header:NAME, regex:PATTERN) for later steps' {{name}} placeholders, and "think" after it (500ms). \
        A placeholder may stand anywhere in a URL, the whole URL included.
          [{"name": "notes", "flow": [
            {"name": "create", "method": "POST",
             "url": "http://h/notes", "body": "{}",
             "extract": {"next": "header:location"},
             "checks": ["status==201"]},
            {"name": "read", "url": "{{next}}",
             "think": "500ms"},
            {"name": "delete", "method": "DELETE",
             "url": "{{next}}"}]}]
        """))
    var scenario: String?

    @Option(help: ArgumentHelp(
        "A condition on every response, counted per check (not a failed request): 'status==200', 'header:content-type~json', 'json:$.items.length>0', 'body~\"ok\"'; repeatable.",
        valueName: "check"))
    var check: [String] = []

    @Option(help: "A pass/fail condition, as 'p99<200ms', 'errors<0.1%', 'rps>5000'; repeatable. A failure exits with 99.")
    var threshold: [String] = []

    @Flag(help: "Print the result as JSON (with its HDR histogram) instead of the summary.")
    var json = false

    @Option(help: "Also write the JSON result here, for `courier load merge`: a file, or gs://bucket/folder/ (Application Default Credentials); repeatable.")
    var output: [String] = []

    @Option(help: "Write an HTML report (charts over time, percentiles, status codes, thresholds) to this file.")
    var report: String?

    @Option(help: "Run shard i of n (as 3/20): each shard sends its share of --requests, --rate and --concurrency.")
    var shard: String?

    @Option(help: "Run one of this many shards, the index taken from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's pod).")
    var shards: Int?

    @Option(help: "Wait until this time to start (2026-11-24T10:00:00Z, or seconds since 1970), so every shard starts together.")
    var startAt: String?

    @Option(help: "Where request tasks run: loop (on the service's event loop thread, no hop) or default.")
    var executor = "loop"

    @Option(help: "Serve live Prometheus metrics on this port during the run (GET /metrics): requests and errors by status and step, a latency histogram, checks, skipped flow steps, dropped requests, bytes each way, in flight, the target rate.")
    var metricsPort: Int?

    @Option(help: "The address --metrics-port listens on; 0.0.0.0 in a pod that Prometheus scrapes.")
    var metricsHost = "127.0.0.1"

    @Option(help: "Keep serving --metrics-port this long after the run, so a last scrape sees the final figures (as 15s).")
    var metricsLinger = "0s"

    public init() {}

    public func validate() throws {
        let options = try makeOptions(checking: true)
        _ = try parsedThresholds()
        guard ["loop", "default"].contains(executor) else { throw ValidationError("--executor: loop or default") }
        try ResultOutput.validate(outputs: output, shard: options.shard)
        _ = try startTime()
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port \(metricsPort): expected 0 to 65535") }
        _ = try DurationParsing.require(metricsLinger, "--metrics-linger")
    }

    public func run() async throws {
        Terminal.raiseOpenFileLimit()
        let options = try makeOptions()
        let thresholds = try parsedThresholds()
        if let bucket = output.first(where: { StorageLocation($0) != nil }) {
            do { try await CloudStorageResults.checkCredentials() } catch {
                throw ValidationError("--output \(bucket): no way to write to Cloud Storage: \(error)")
            }
        }
        let server: TestServer? = options.url == nil && options.scenario == nil ? try await TestServer.start() : nil
        if let server { Terminal.note("courier: loading the embedded test server at \(server.baseURL.absoluteString)") }
        let metrics = metricsPort.map { _ in LoadMetrics() }
        var endpoint: MetricsEndpoint?
        var result: LoadResult
        do {
            if let metrics, let metricsPort {
                do { endpoint = try await MetricsEndpoint.start(metrics, host: metricsHost, port: metricsPort) } catch {
                    throw ValidationError("\(error)")
                }
                Terminal.note("courier: live metrics on \(endpoint!.url)")
            }
            let runner = try LoadRunner(options: options, defaultURL: server?.url("/json/1024"), metrics: metrics)
            let live = Terminal.isInteractive ? LiveProgress() : nil
            var progress: (@Sendable (LoadProgress) -> Void)?
            if let live { progress = { live.show($0) } }
            let report = progress
            let start = try startTime()
            result = try await Terminal.cancellingOnInterrupt {
                if let start { try await Self.wait(until: start) }
                return try await runner.run(progress: report)
            }
            live?.clear()
        } catch {
            await endpoint?.stop()
            await server?.stop()
            throw error
        }
        await server?.stop()
        result.thresholds = thresholds.map { $0.evaluate(result) }
        do {
            try await ResultOutput.emit(result, json: json, outputs: output, report: report)
        } catch {
            await linger(endpoint)
            throw error
        }
        await linger(endpoint)
    }

    /// Serves the final metrics for `--metrics-linger` (Ctrl-C ends it early), then stops the endpoint.
    private func linger(_ endpoint: MetricsEndpoint?) async {
        guard let endpoint else { return }
        if let linger = DurationParsing.parse(metricsLinger), linger > .zero {
            Terminal.note("courier: the final metrics stay on \(endpoint.url) for \(metricsLinger)")
            try? await Terminal.cancellingOnInterrupt { try await Task.sleep(for: linger) }
        }
        await endpoint.stop()
    }

    /// `--start-at`, as a date: at most a year from now, since shards wait for it.
    func startTime(now: Date = Date()) throws -> Date? {
        guard let startAt else { return nil }
        let date: Date
        if let seconds = Double(startAt), seconds.isFinite, seconds > 0 {
            date = Date(timeIntervalSince1970: seconds)
        } else if let parsed = ISO8601DateFormatter().date(from: startAt) {
            date = parsed
        } else {
            throw ValidationError("--start-at \(startAt): expected a time as 2026-11-24T10:00:00Z, or seconds since 1970")
        }
        guard date.timeIntervalSince(now) <= Self.latestStart else {
            throw ValidationError("--start-at \(startAt): more than a year from now")
        }
        return date
    }

    /// How far ahead `--start-at` may be: a year.
    static let latestStart: Double = 366 * 86_400

    /// Sleeps until `start` by the wall clock (interruptible); a time already past starts at once, with a note.
    static func wait(until start: Date) async throws {
        // Held to a year either way: the start was checked, but the clock may have moved since.
        let seconds = min(max(start.timeIntervalSinceNow, -latestStart), latestStart)
        if seconds > 0 {
            Terminal.note("courier: starting at \(ISO8601DateFormatter().string(from: start)), in \(Int(seconds.rounded(.up))) s")
            try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
        } else if seconds < -1 {
            Terminal.note("courier: --start-at passed \(Int(-seconds)) s ago; starting now, behind the other shards")
        }
    }

    func parsedThresholds() throws -> [Threshold] {
        try threshold.map { expression in
            do { return try Threshold(expression) } catch { throw ValidationError("--threshold \(error)") }
        }
    }
}
