import ArgumentParser
import Courier

/// `courier`: load-test REST/JSON APIs and serve the test server.
public struct CourierCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Courier's command line: load-test HTTP APIs, run the test server, generate typed clients.",
        version: CourierVersion.version,
        subcommands: [LoadCommand.self, ServeCommand.self, GenerateCommand.self]
    )

    public init() {}
}

/// `courier load`: run a load test (the default) or merge results.
public struct LoadCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load an HTTP endpoint and report throughput, latency percentiles and errors.",
        discussion: """
            Without a URL or a scenario, starts the embedded test server and loads its /json/1024.
            Exit status: 0 when every threshold held, 99 when one failed, 64 for bad arguments.
            Every option of a run: courier load run --help.
            """,
        subcommands: [LoadRunCommand.self, LoadMergeCommand.self],
        defaultSubcommand: LoadRunCommand.self
    )

    public init() {}
}
