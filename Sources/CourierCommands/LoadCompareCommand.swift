import ArgumentParser
import CourierLoad
import Foundation

/// `courier load compare base.json new.json`: whether a change made a service faster, slower or
/// only noisier, figure by figure, as benchstat does for benchmarks.
public struct LoadCompareCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two load results: each percentile's change with a confidence interval, and a verdict.",
        discussion: """
            For p50, p90, p99 and p99.9 (those with enough requests beyond them), the mean latency, \
            requests/s and the error rate: the change from base to new, its confidence interval from \
            a bootstrap over each run's seconds, and faster / slower (higher / lower, fewer / more), \
            or ~ when the interval includes no change or the change is under the tolerance. Each run \
            needs at least 5 s of timeline.

            Exit status: 0 when no figure got significantly worse, 99 when one did (a CI gate), \
            64 for bad arguments or results that cannot be compared.

            A gs://bucket/folder/ argument merges the sharded run stored there first.

            Examples:
              courier load compare main.json branch.json
              courier load compare main.json branch.json --tolerance 2% --report compare.html
            """
    )

    @Argument(help: "The result to compare against (written by `courier load --output` or `--json`).")
    var base: String

    @Argument(help: "The result that may have changed.")
    var new: String

    @Option(help: "The confidence of each interval: 95%, 99%, or a fraction.")
    var confidence = "95%"

    @Option(help: "The smallest relative change of a latency or of requests/s that counts as one.")
    var tolerance = "5%"

    @Option(name: .customLong("error-tolerance"), help: "The smallest change of the error rate that counts as one, in points.")
    var errorTolerance = "0.1%"

    @Option(help: "Bootstrap replicates; more gives steadier intervals, slower.")
    var replicates = 2000

    @Option(help: "The bootstrap's seed: the same results and seed always give the same intervals.")
    var seed: UInt64 = 1

    @Flag(help: "Print the comparison as JSON instead of the table.")
    var json = false

    @Option(help: "Write an HTML page with the table and the two runs overlaid to this file.")
    var report: String?

    public init() {}

    /// Exit status when a figure got significantly worse.
    static let regressed = ExitCode(99)

    public func validate() throws {
        do { try settings().validate() } catch let error as LoadError { throw ValidationError(error.message) }
        try ResultInput.validate([base, new])
        guard base != "-" || new != "-" else { throw ValidationError("only one of the two results can come from standard input") }
    }

    func settings() throws -> LoadComparison.Settings {
        LoadComparison.Settings(confidence: try Self.fraction(confidence, "--confidence"),
                                tolerance: try Self.fraction(tolerance, "--tolerance"),
                                errorTolerance: try Self.fraction(errorTolerance, "--error-tolerance"),
                                replicates: replicates, seed: seed)
    }

    /// `95%` → 0.95; a bare number is a fraction already.
    static func fraction(_ text: String, _ option: String) throws -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let percent = trimmed.hasSuffix("%")
        guard let number = Double(percent ? String(trimmed.dropLast()) : trimmed), number.isFinite, number >= 0 else {
            throw ValidationError("\(option): \"\(text)\" is not a percentage (as in 5% or 0.05)")
        }
        return percent ? number / 100 : number
    }

    public func run() async throws {
        let baseResult = try await ResultInput.merged([base])
        let newResult = try await ResultInput.merged([new])
        let comparison: LoadComparison
        do {
            comparison = try LoadComparison(base: baseResult, new: newResult, settings: try settings(), names: (base, new))
        } catch {
            throw ValidationError("\(error)")
        }
        let text = LoadComparisonReport(comparison, base: baseResult, new: newResult, names: (base, new))
        if json {
            try Terminal.print(try comparison.jsonData() + Data("\n".utf8))
        } else {
            try Terminal.print(Data(text.text.utf8))
        }
        if let report {
            do {
                try Data(LoadComparisonHTMLReport(text).html.utf8).write(to: URL(fileURLWithPath: report), options: .atomic)
            } catch {
                throw ValidationError("--report: cannot write \(report): \(error.localizedDescription)")
            }
        }
        if comparison.regressed { throw Self.regressed }
    }
}
