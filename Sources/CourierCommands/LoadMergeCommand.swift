import ArgumentParser
import CourierLoad
import Foundation

/// `courier load merge a.json b.json …`: one result from runs on several machines.
public struct LoadMergeCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge JSON results from several machines into one, exactly.",
        discussion: """
            Counts add up and the HDR histograms merge bucket by bucket, so the merged percentiles \
            are those of all requests together, not an average of percentiles. Runs are taken to \
            have run side by side: the duration is the longest, the concurrency and rate the sum, \
            and timelines line up by wall clock.

            A gs://bucket/folder/ argument reads every .json result in that folder (Application \
            Default Credentials; STORAGE_EMULATOR_HOST for an emulator). Shards of a sharded run \
            must all be there, once each, or the merge fails naming those missing.

            Examples:
              courier load merge a.json b.json --threshold 'p99<50ms'
              courier load merge gs://bucket/run-1/ --report run-1.html
            """
    )

    @Argument(help: "Result files written by `courier load --json` or `--output`, or gs://bucket/folder/; - reads standard input.")
    var files: [String]

    @Option(help: "A pass/fail condition on the merged result; repeatable. A failure exits with 99.")
    var threshold: [String] = []

    @Flag(help: "Print the merged result as JSON instead of the summary.")
    var json = false

    @Option(help: "Also write the merged JSON result here: a file or a gs:// location; repeatable.")
    var output: [String] = []

    @Option(help: "Write an HTML report of the merged result to this file.")
    var report: String?

    public init() {}

    public func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one result file") }
        for expression in threshold {
            do { _ = try Threshold(expression) } catch { throw ValidationError("--threshold \(error)") }
        }
        try ResultInput.validate(files)
        try ResultOutput.validate(outputs: output)
    }

    public func run() async throws {
        var merged = try await ResultInput.merged(files)
        merged.thresholds = try threshold.map { try Threshold($0).evaluate(merged) }
        try await ResultOutput.emit(merged, json: json, outputs: output, report: report)
    }
}
