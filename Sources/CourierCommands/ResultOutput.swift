import ArgumentParser
import CourierLoad
import Foundation

/// Prints a result as the summary or as JSON, writes the JSON file, and turns failed thresholds
/// into exit status 99 (as k6 does), after everything is printed.
enum ResultOutput {
    static let thresholdsFailed = ExitCode(99)

    static func emit(_ result: LoadResult, json: Bool, output: String?) throws {
        if json || output != nil {
            let data = try result.jsonData()
            if let output {
                do {
                    try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                } catch {
                    throw ValidationError("--output: cannot write \(output): \(error.localizedDescription)")
                }
            }
            if json { try Terminal.print(data + Data("\n".utf8)) }
        }
        if !json { try Terminal.print(Data(LoadReport(result).text.utf8)) }
        if result.thresholds.contains(where: { !$0.passed }) { throw thresholdsFailed }
    }
}
