import ArgumentParser
import CourierLoad
import Foundation

/// Prints a result as the summary or as JSON, writes the JSON to files and `gs://` locations and
/// the HTML report, and turns failed thresholds into exit status 99 (as k6 does), after
/// everything is written.
enum ResultOutput {
    static let thresholdsFailed = ExitCode(99)

    static func emit(_ result: LoadResult, json: Bool, outputs: [String], report: String?) async throws {
        var failures: [String] = []
        if json || !outputs.isEmpty {
            let data = try result.jsonData()
            var onStdout = json
            for output in outputs {
                do {
                    if let location = StorageLocation(output) {
                        Terminal.note("courier: result written to \(try await CloudStorageResults.write(data, to: location, shard: result.shard))")
                    } else {
                        try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                    }
                } catch {
                    // The load has run: its result must not be lost with one output. A pod's root
                    // filesystem may be read-only, so the JSON goes to stdout (the pod's log).
                    failures.append("--output: cannot write \(output): \(error)")
                    Terminal.note("courier: cannot write \(output): \(error)")
                    if !onStdout {
                        Terminal.note("courier: the JSON result follows on stdout instead, so it is not lost")
                        try Terminal.print(data + Data("\n".utf8))
                        onStdout = true
                    }
                }
            }
            if json { try Terminal.print(data + Data("\n".utf8)) }
        }
        if let report {
            do {
                try Data(LoadHTMLReport(result).html.utf8).write(to: URL(fileURLWithPath: report), options: .atomic)
            } catch {
                failures.append("--report: cannot write \(report): \(error.localizedDescription)")
            }
        }
        if !json { try Terminal.print(Data(LoadReport(result).text.utf8)) }
        if !failures.isEmpty { throw ValidationError(failures.joined(separator: "\n")) }
        if result.thresholds.contains(where: { !$0.passed }) { throw thresholdsFailed }
    }

    /// Checks `--output` values before a run, so a typo fails in a second, not after the load:
    /// each `gs://` must read, and name an object this run (or shard) may write.
    static func validate(outputs: [String], shard: LoadShard? = nil) throws {
        for output in outputs where output.hasPrefix("gs:") {
            guard let location = StorageLocation(output) else { throw ValidationError("--output \(output): expected gs://bucket/folder/") }
            do { _ = try location.objectName(for: shard) } catch { throw ValidationError("--output: \(error)") }
        }
    }
}
