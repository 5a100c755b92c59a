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
            have run side by side: the duration is the longest, the concurrency and rate the sum.
            """
    )

    @Argument(help: "Result files written by `courier load --json` or `--output`; - reads standard input.")
    var files: [String]

    @Option(help: "A pass/fail condition on the merged result; repeatable. A failure exits with 99.")
    var threshold: [String] = []

    @Flag(help: "Print the merged result as JSON instead of the summary.")
    var json = false

    @Option(help: "Also write the merged JSON result to this file.")
    var output: String?

    public init() {}

    public func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one result file") }
        for expression in threshold {
            do { _ = try Threshold(expression) } catch { throw ValidationError("--threshold \(error)") }
        }
    }

    public func run() async throws {
        var results: [LoadResult] = []
        for file in files {
            let data = file == "-" ? (try? FileHandle.standardInput.readToEnd()) ?? Data() : FileManager.default.contents(atPath: file)
            guard let data else { throw ValidationError("cannot read \(file)") }
            do {
                results.append(try LoadResult.decode(data))
            } catch {
                throw ValidationError("\(file): \(error)")
            }
        }
        guard var merged = LoadResult.merged(results) else { throw ValidationError("nothing to merge") }
        merged.thresholds = try threshold.map { try Threshold($0).evaluate(merged) }
        try ResultOutput.emit(merged, json: json, output: output)
    }
}
