import ArgumentParser
import Courier

/// `courier`: load-test REST/JSON APIs and serve the test server.
public struct CourierCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Courier's command line: load-test HTTP APIs, run the test server, generate typed clients, sign URLs, sign in.",
        version: CourierVersion.version,
        subcommands: [LoadCommand.self, ServeCommand.self, GenerateCommand.self, SignURLCommand.self, AuthCommand.self]
    )

    public init() {}
}

/// `courier load`: run a load test (the default), merge results or compare two.
public struct LoadCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load an HTTP endpoint and report throughput, latency percentiles and errors.",
        discussion: """
            Without a URL or a scenario, starts the embedded test server and loads its /json/1024.
            Exit status: 0 when every threshold held, 99 when one failed, 64 for bad arguments.

            Many machines: --shards n in a Kubernetes Indexed Job (the index from \
            JOB_COMPLETION_INDEX) or --shard i/n sends that shard's share of the run; \
            --output gs://bucket/folder/ stores each shard's result in Cloud Storage, and \
            `courier load merge gs://bucket/folder/` merges them exactly (deploy/load-job.yaml).
            Reports: --report run.html (on a run or a merge) writes one self-contained HTML page \
            with throughput, errors and percentiles over time, the percentile curve, status codes \
            and thresholds.

            Comparing runs: `courier load compare base.json new.json` gives each percentile's \
            change with a confidence interval and exits 99 when a figure got significantly worse.

            Every option of a run: courier load run --help.
            """,
        subcommands: [LoadRunCommand.self, LoadMergeCommand.self, LoadCompareCommand.self],
        defaultSubcommand: LoadRunCommand.self
    )

    public init() {}
}
