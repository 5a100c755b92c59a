import ArgumentParser
import Courier
@testable import CourierCommands
import CourierLoad
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// The `courier` command line: parsing in process, and the real binary end to end.
@Suite struct LoadCommandTests {
    @Test func optionsAreParsedAsTheHelpSays() throws {
        let command = try LoadRunCommand.parse([
            "http://127.0.0.1:9/api", "-c", "100", "--connections", "10", "-d", "1m30s", "--rate", "2000", "--warmup", "500ms",
            "-m", "post", "-H", "X-A: 1", "-H", "X-B:two words", "--body", "{}", "--http2", "--timeout", "2s", "-k",
            "--threshold", "p99<50ms", "--executor", "default",
        ])
        let options = try command.makeOptions(environment: [:])
        #expect(options.url?.absoluteString == "http://127.0.0.1:9/api")
        #expect(options.concurrency == 100 && options.connections == 10)
        #expect(options.duration == .seconds(90))
        #expect(options.rate == 2000)
        #expect(options.warmup == .milliseconds(500))
        #expect(options.method == "POST")
        #expect(options.headers.map { "\($0.0)=\($0.1)" } == ["X-A=1", "X-B=two words"])
        #expect(options.body == Data("{}".utf8))
        #expect(options.http2 && options.insecure && !options.loopExecutor)
        #expect(options.timeout == .seconds(2))
        #expect(try command.parsedThresholds().map(\.expression) == ["p99<50ms"])
    }

    @Test func theBearerTokenCanComeFromTheEnvironment() throws {
        let command = try LoadRunCommand.parse(["http://127.0.0.1:9/"])
        #expect(try command.makeOptions(environment: ["COURIER_BEARER_TOKEN": "from-env"]).bearerToken == "from-env")
        #expect(try command.makeOptions(environment: [:]).bearerToken == nil)
    }

    @Test(arguments: [
        ["ftp://x/"], ["http://x/", "-c", "0"], ["http://x/", "-d", "soon"], ["http://x/", "-n", "0"], ["http://x/", "--rate", "-5"],
        ["http://x/", "-H", "no colon"], ["http://x/", "--body", "a", "--body-file", "/etc/hostname"],
        ["http://x/", "--threshold", "p99<<1"], ["http://x/", "--executor", "fast"], ["http://x/", "--timeout", "0s"],
        ["http://x/", "--body-file", "/does/not/exist"], ["http://x/", "--scenario", "/does/not/exist"],
    ])
    func mistakesAreUsageErrors(arguments: [String]) {
        #expect(throws: (any Error).self) {
            let command = try LoadRunCommand.parse(arguments)
            try command.validate()
        }
    }

    /// `--stage`: rates (`/s`) ramp the open model, bare counts the closed model's requests in flight.
    @Test func stagesAreParsed() throws {
        let open = try LoadRunCommand.parse(["http://x/", "--stage", "30s:100/s", "--stage", "1m30s:1000/s", "--stage", "30s:0/s"]).makeOptions()
        #expect(open.ramp == LoadRamp(.rate, stages: [try LoadStage(duration: .seconds(30), target: 100),
                                                     try LoadStage(duration: .seconds(90), target: 1000),
                                                     try LoadStage(duration: .seconds(30), target: 0)]))
        #expect(open.settings["stages"] == "30s:100/s 90s:1000/s 30s:0/s")
        let closed = try LoadRunCommand.parse(["http://x/", "--stage", "1m:200", "--stage", "500ms:10"]).makeOptions()
        #expect(closed.ramp == LoadRamp(.concurrency, stages: [try LoadStage(duration: .seconds(60), target: 200),
                                                              try LoadStage(duration: .milliseconds(500), target: 10)]))
        #expect(closed.settings["concurrency"] == "200")
    }

    /// Each mistake names the argument and what is wrong, before the run.
    @Test(arguments: [
        (["--stage", "30s"], "--stage 30s: expected length:target"),
        (["--stage", "soon:100/s"], "--stage soon:100/s: expected length:target"),
        (["--stage", "30s:fast/s"], "fast/s is not a number per second"),
        (["--stage", "0s:100/s"], "--stage 0s:100/s: a stage lasts longer than 0 s"),
        (["--stage", "30s:-4"], "--stage 30s:-4"),
        (["--stage", "30s:100/s", "--stage", "30s:50"], "not both"),
        (["--stage", "30s:100/s", "-d", "1m"], "give stages or --duration"),
        (["--stage", "30s:100/s", "-n", "100"], "a request count"),
        (["-n", "100", "-d", "0s"], "--duration must be positive"),
        (["--stage", "30s:0/s"], "never reach one request"),
        (["--stage", "30s:10", "--rate", "5"], "closed model"),
        (["--stage", "30s:100/s", "--warmup", "5s"], "warm-up"),
        (["--check", "status=200"], "--check status=200: expected an operator"),
        (["--check", "json:$..x"], "--check json:$..x: a . in the JSON path is followed by no name"),
        // Numbers past what any run can take: each was a trap (SIGILL, "Double value cannot be
        // converted"), and is now a usage error saying why.
        (["-d", "inf"], "--duration: \"inf\" is not a duration"),
        (["-d", "1e300"], "--duration: \"1e300\" is longer than ten years"),
        (["-d", "99999999999999999h"], "longer than ten years"),
        (["--timeout", "1e20"], "--timeout: \"1e20\" is longer than ten years"),
        (["--warmup", "3650000000s"], "--warmup: \"3650000000s\" is longer than ten years"),
        (["--rate", "1e-300"], "rate 1e-300 is below one request in ten years"),
        (["--start-at", "1e300"], "--start-at 1e300: more than a year from now"),
        (["--start-at", "9999-01-01T00:00:00Z"], "more than a year from now"),
        (["-c", "2000000"], "concurrency 2000000 is more than 1000000 in one process"),
        (["--stage", "1m:1e300"], "more than 1000000 in one process"),
        (["--stage", "1e300s:10/s"], "--stage 1e300s:10/s: expected length:target"),
        (["--stage", "200000000s:10/s", "--stage", "200000000s:10/s"], "the stages last longer than ten years"),
    ])
    func mistakesNameTheArgument(arguments: [String], message: String) {
        do {
            let command = try LoadRunCommand.parse(["http://x/"] + arguments)
            try command.validate()
            Issue.record("\(arguments) was accepted")
        } catch {
            #expect(LoadRunCommand.message(for: error).contains(message), "\(LoadRunCommand.message(for: error))")
        }
    }

    @Test(arguments: [("10s", 10_000.0), ("500ms", 500), ("2m", 120_000), ("1m30s", 90_000), ("1h", 3_600_000), ("1.5", 1_500),
                      ("250us", 0.25)])
    func durations(text: String, milliseconds: Double) throws {
        let duration = try #require(DurationParsing.parse(text))
        #expect(abs(Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15 - milliseconds) < 1e-6)
    }

    @Test(arguments: ["", "ten", "10x", "s", "-1s", "1m-3s", "inf", "nan", "infinity", "1e400", "1e300s"])
    func notDurations(text: String) {
        #expect(DurationParsing.parse(text) == nil)
    }

    // MARK: The binary

    static var courier: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier")
    }

    /// Not on a TTY (stdout and stderr are pipes here): a plain summary, no live line, no escapes.
    @Test func theSummaryOnAPipe() async throws {
        try await withTestServer { server in
            let run = try await runProcess(Self.courier, ["load", server.url("/json/256").absoluteString, "-c", "4", "-n", "300",
                                                          "--auth-bearer", "cli-\(SuiteLog.marker)-token"], timeout: 120)
            let text = String(decoding: run.output, as: UTF8.self)
            #expect(run.status == 0, "\(run.error)")
            #expect(text.contains("Requests/sec:"))
            #expect(text.contains("99.99%"))
            #expect(text.contains("200: 300"))
            #expect(text.contains("300 requests in"))
            #expect(!text.contains("\u{1B}") && !run.error.contains("\u{1B}") && !run.error.contains("\r"))
        }
    }

    /// `-n` with `-d`: whichever comes first, as ab's `-n` with `-t`. A count that takes longer
    /// than the duration stops at the duration (a 20 ms endpoint, 2 at a time: about 100 a
    /// second, far from 100,000); one that is reached first stops at the count.
    @Test func aCountAndADurationEndAtWhicheverComesFirst() async throws {
        try await withTestServer { server in
            let slow = server.url("/delay/20").absoluteString
            let started = ContinuousClock.now
            let timed = try await runProcess(Self.courier, ["load", slow, "-c", "2", "-n", "100000", "-d", "1s", "--json"], timeout: 120)
            let elapsed = ContinuousClock.now - started
            #expect(timed.status == 0, "\(timed.error)")
            let result = try LoadResult.decode(timed.output)
            #expect(result.requests > 0 && result.requests < 1_000, "\(result.requests) requests")
            #expect(result.settings["requests"] == "100000" && result.settings["duration"] == "1.0 seconds")
            #expect(elapsed < .seconds(30))
            let counted = try await runProcess(Self.courier, ["load", server.url("/json/256").absoluteString, "-c", "2", "-n", "40",
                                                              "-d", "10m", "--json"], timeout: 120)
            #expect(counted.status == 0, "\(counted.error)")
            #expect(try LoadResult.decode(counted.output).requests == 40)
        }
    }

    @Test func jsonOutputThresholdsAndMerge() async throws {
        try await withTestServer { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-load-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = server.url("/json/128").absoluteString
            let first = directory.appendingPathComponent("a.json").path
            let second = directory.appendingPathComponent("b.json").path

            let passing = try await runProcess(Self.courier, ["load", url, "-c", "2", "-n", "200", "--json", "--output", first,
                                                              "--threshold", "errors<1%", "--threshold", "p50<10s"], timeout: 120)
            #expect(passing.status == 0, "\(passing.error)")
            let printed = try LoadResult.decode(passing.output)
            #expect(printed.requests == 200)
            #expect(printed.thresholds.map(\.passed) == [true, true])
            #expect(try LoadResult.decode(Data(contentsOf: URL(fileURLWithPath: first))).latency == printed.latency)

            let failing = try await runProcess(Self.courier, ["load", url, "-c", "3", "-n", "150", "--output", second,
                                                              "--threshold", "rps>100000000"], timeout: 120)
            #expect(failing.status == 99)
            #expect(String(decoding: failing.output, as: UTF8.self).contains("FAIL"))

            let merged = try await runProcess(Self.courier, ["load", "merge", first, second, "--json", "--threshold", "requests>=350"],
                                              timeout: 60)
            #expect(merged.status == 0, "\(merged.error)")
            let result = try LoadResult.decode(merged.output)
            var expected = try LoadResult.decode(Data(contentsOf: URL(fileURLWithPath: first)))
            expected.merge(try LoadResult.decode(Data(contentsOf: URL(fileURLWithPath: second))))
            #expect(result.requests == 350 && result.runs == 2 && result.concurrency == 5)
            #expect(result.latency == expected.latency)
            #expect(result.thresholds.map(\.passed) == [true])
        }
    }

    @Test func aScenarioReportsEachEndpoint() async throws {
        try await withTestServer { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-scenario-\(UUID()).json")
            defer { try? FileManager.default.removeItem(at: file) }
            let scenario = """
                [{"name": "small", "url": "\(server.url("/json/64").absoluteString)", "weight": 3},
                 {"name": "echo", "method": "POST", "url": "\(server.url("/echo").absoluteString)", "body": "{\\"x\\":1}",
                  "headers": {"X-Scenario": "1"}, "weight": 1}]
                """
            try Data(scenario.utf8).write(to: file)
            let run = try await runProcess(Self.courier, ["load", "--scenario", file.path, "-c", "4", "-n", "400", "--json",
                                                          "--threshold", "echo:errors<1%"], timeout: 120)
            #expect(run.status == 0, "\(run.error)")
            let result = try LoadResult.decode(run.output)
            let small = try #require(result.endpoints["small"])
            let echo = try #require(result.endpoints["echo"])
            #expect(small.requests + echo.requests == 400)
            #expect((240...360).contains(small.requests)) // weight 3 of 4
            #expect(echo.errors == 0)
            #expect(result.bytesSent == Int64(echo.requests * 7))
        }
    }

    /// Every name of `Redaction.secretNames` as a URL parameter and a header of a run, and in a
    /// scenario's URL: the summary, the JSON result, the HTML report and the errors hold none of
    /// the values.
    @Test func theOutputsHoldNoSecretName() async throws {
        try await withTestServer { server in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-load-secrets-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let values = Redaction.secretNames.map { "\($0)-\(SuiteLog.marker)-\(UUID().uuidString.prefix(8))" }
            let query = zip(Redaction.secretNames, values).map { "\($0)=\($1)" }.joined(separator: "&")
            let url = server.url("/echo").absoluteString + "?alt=json&" + query
            let headers = zip(Redaction.secretNames, values).flatMap { ["-H", "\($0): \($1)"] }
            let (result, report) = (directory.appendingPathComponent("result.json"), directory.appendingPathComponent("report.html"))
            let run = try await runProcess(Self.courier, ["load", url, "-c", "2", "-n", "40", "--output", result.path,
                                                          "--report", report.path] + headers, timeout: 120)
            #expect(run.status == 0, "\(run.error)")
            let scenario = directory.appendingPathComponent("scenario.json")
            try Data(#"[{"name": "echo", "url": "\#(url)", "weight": -1}]"#.utf8).write(to: scenario)
            let refused = try await runProcess(Self.courier, ["load", "--scenario", scenario.path, "-n", "1"], timeout: 60)
            #expect(refused.status == 64, "a negative weight is a usage error")
            let outputs = [("summary", String(decoding: run.output, as: UTF8.self)), ("stderr", run.error),
                           ("result", try String(contentsOf: result, encoding: .utf8)),
                           ("report", try String(contentsOf: report, encoding: .utf8)), ("error", refused.error)]
            #expect(outputs[2].1.contains(Redaction.placeholder) && refused.error.contains(Redaction.placeholder))
            for (output, text) in outputs {
                for value in values where text.contains(value) { Issue.record("\(value) in the \(output)") }
            }
        }
    }

    /// URLs Foundation parses that no request can go to: a usage error naming the problem, not a
    /// trap (a port past 65535 killed the process with SIGILL), and never a request sent.
    @Test(arguments: [("http://127.0.0.1:99999/", "port 99999"),
                      ("http://\(String(repeating: "a", count: 70_000)).example/", "host is 70008 bytes")])
    func hostileURLsExitWithUsage(url: String, message: String) async throws {
        let run = try await runProcess(Self.courier, ["load", url, "-n", "1"], timeout: 60)
        #expect(run.status == 64, "\(run.error.prefix(300))")
        #expect(run.error.contains(message), "\(run.error.prefix(300))")
    }

    /// A scenario file that does not parse names the file, the line and column of a syntax error
    /// or the entry and field of a wrong value, and what was expected; --help shows a flow.
    @Test func aBrokenScenarioIsPlacedAndTheHelpShowsAFlow() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-scenario-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let syntax = directory.appendingPathComponent("syntax.json")
        try Data("[{\"name\": \"a\",\n  \"url\": http://x/}]".utf8).write(to: syntax)
        let shape = directory.appendingPathComponent("shape.json")
        try Data(#"[{"name": "a", "url": "http://127.0.0.1:9/"}, {"name": "b", "url": "http://127.0.0.1:9/", "weight": "heavy"}]"#.utf8)
            .write(to: shape)
        let first = try await runProcess(Self.courier, ["load", "--scenario", syntax.path, "-n", "1"], timeout: 60)
        #expect(first.status == 64)
        #expect(first.error.contains("\(syntax.path): line 2, column 10"), "\(first.error)")
        let second = try await runProcess(Self.courier, ["load", "--scenario", shape.path, "-n", "1"], timeout: 60)
        #expect(second.status == 64)
        #expect(second.error.contains("\(shape.path): entry 2, weight: expected a number"), "\(second.error)")
        let help = try await runProcess(Self.courier, ["load", "run", "--help"], timeout: 60)
        let text = String(decoding: help.output, as: UTF8.self)
        for word in ["\"flow\"", "extract", "think", "checks", "{{next}}"] { #expect(text.contains(word), "--help lacks \(word)") }
    }

    /// The binary itself, as a user runs it: the numbers that trapped exit 64 with the message.
    @Test(arguments: [(["-d", "inf"], "is not a duration"), (["--rate", "1e-300", "-d", "2s"], "below one request in ten years"),
                      (["--start-at", "1e18"], "more than a year from now")])
    func numbersPastAnyRunExitWithUsage(arguments: [String], message: String) async throws {
        let run = try await runProcess(Self.courier, ["load", "http://127.0.0.1:9/"] + arguments, timeout: 60)
        #expect(run.status == 64, "\(run.error.prefix(300))")
        #expect(run.error.contains(message), "\(run.error.prefix(300))")
    }

    @Test func badArgumentsExitWithUsage() async throws {
        let run = try await runProcess(Self.courier, ["load", "http://127.0.0.1:9/", "-c", "zero"], timeout: 60)
        #expect(run.status == 64)
        #expect(run.error.contains("concurrency"))
        let stage = try await runProcess(Self.courier, ["load", "http://127.0.0.1:9/", "--stage", "30s:fast"], timeout: 60)
        #expect(stage.status == 64)
        #expect(stage.error.contains("--stage 30s:fast"))
        let merge = try await runProcess(Self.courier, ["load", "merge", "/does/not/exist.json"], timeout: 60)
        #expect(merge.status != 0)
        #expect(merge.error.contains("/does/not/exist.json"))
    }

    /// `courier load` without a URL starts the embedded server and loads it.
    @Test func withoutAURLTheEmbeddedServerIsLoaded() async throws {
        let run = try await runProcess(Self.courier, ["load", "-c", "8", "-n", "500", "--json"], timeout: 120)
        #expect(run.status == 0, "\(run.error)")
        let result = try LoadResult.decode(run.output)
        #expect(result.statusCodes == [200: 500])
        #expect(result.bytesReceived == 500 * 1024)
        #expect(run.error.contains("embedded test server"))
    }
}
