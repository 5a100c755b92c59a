import ArgumentParser
import CourierLoad
import Foundation

/// Prints a result as the summary or as JSON, writes the JSON to files and `gs://` locations and
/// the HTML report, and turns failed thresholds into exit status 99 (as k6 does), after
/// everything is written.
enum ResultOutput {
    static let thresholdsFailed = ExitCode(99)

    static func emit(_ result: LoadResult, json: Bool, outputs: [String], report: String?) async throws {
        if json || !outputs.isEmpty {
            let data = try result.jsonData()
            for output in outputs {
                if let location = StorageLocation(output) {
                    do {
                        let written = try await CloudStorageResults.write(data, to: location, shard: result.shard)
                        Terminal.note("courier: result written to \(written)")
                    } catch {
                        throw ValidationError("--output: cannot write \(output): \(error)")
                    }
                } else {
                    do {
                        try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                    } catch {
                        throw ValidationError("--output: cannot write \(output): \(error.localizedDescription)")
                    }
                }
            }
            if json { try Terminal.print(data + Data("\n".utf8)) }
        }
        if let report {
            do {
                try Data(LoadHTMLReport(result).html.utf8).write(to: URL(fileURLWithPath: report), options: .atomic)
            } catch {
                throw ValidationError("--report: cannot write \(report): \(error.localizedDescription)")
            }
        }
        if !json { try Terminal.print(Data(LoadReport(result).text.utf8)) }
        if result.thresholds.contains(where: { !$0.passed }) { throw thresholdsFailed }
    }

    /// Checks `--output` values before a run, so a typo fails in a second, not after the load.
    static func validate(outputs: [String]) throws {
        for output in outputs where output.hasPrefix("gs:") {
            guard StorageLocation(output) != nil else { throw ValidationError("--output \(output): expected gs://bucket/folder/") }
        }
    }
}
