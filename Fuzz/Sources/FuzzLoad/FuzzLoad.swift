import Courier
import CourierLoad
import Foundation
import FuzzDriver

// What `courier load` users hand it (issue 51), in process: the first byte picks the input, the
// rest is its text. Every input parses into its value or throws LoadError; nothing may trap.
//   0: a scenario file, then the run prepared with it (LoadRunner(options:), which sends nothing)
//   1: a CSV data file, 2: an NDJSON data file
//   3: a check expression
//   4: a threshold expression, evaluated on a canned result
//   5: a URL (a template when it has {{…}}), checked as the run would
//   6: an extraction's response body for a scenario with a flow
//   7: a result file, as `merge`, `compare` and `--report` read it: merged with itself, compared
//      with itself, both reports drawn
//   8: a run's numbers in text (rate, duration, concurrency, stage length and target): the
//      options checked and the run prepared (LoadScheduleTests take the schedule past the clock)
// First bytes below 224 keep the committed corpus's choice (% 7); 224 and up pick 7 and 8.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let selector = start[0] >= 224 ? 7 + (start[0] - 224) % 2 : start[0] % 7
    let bytes = Data(UnsafeBufferPointer(start: start + 1, count: count - 1))
    let text = String(decoding: bytes, as: UTF8.self)
    switch selector {
    case 0:
        if let scenario = try? Scenario(json: bytes) {
            var options = LoadOptions()
            options.scenario = scenario
            options.requests = 1
            _ = try? LoadRunner(options: options) // checks the options and prepares every request; sends nothing
        }
    case 1, 2:
        if let data = try? LoadData(text: text, jsonLines: selector == 2, source: "fuzz") {
            var options = LoadOptions()
            options.data = data
            options.urlTemplate = "http://127.0.0.1:9/{{\(data.columns.first ?? "x")}}"
            _ = try? LoadRunner(options: options) // checks the options and prepares every request; sends nothing
        }
    case 3:
        if let check = try? LoadCheck(text) {
            _ = check.expression
        }
    case 4:
        if let threshold = try? Threshold(text) {
            var result = LoadResult(target: "http://127.0.0.1:9/", model: .closed, concurrency: 1, durationSeconds: 1,
                                    requests: 10, errors: 1, statusCodes: [200: 9, 500: 1])
            result.skipped = 2
            _ = threshold.evaluate(result)
        }
    case 5:
        var options = LoadOptions()
        if text.contains("{{") { options.urlTemplate = text } else { options.url = URL(string: text) }
        options.requests = 1
        _ = try? LoadRunner(options: options) // checks the options and prepares every request; sends nothing
    case 7:
        if let result = try? LoadResult.decode(bytes) {
            var merged = result
            merged.merge(result)
            _ = LoadReport(merged).text
            _ = LoadHTMLReport(merged).html
            if let comparison = try? LoadComparison(base: result, new: merged) {
                let report = LoadComparisonReport(comparison, base: result, new: merged)
                _ = report.text
                _ = LoadComparisonHTMLReport(report).html
            }
        }
    case 8:
        runNumbers(text)
    default:
        let json = #"[{"name": "f", "flow": [{"name": "a", "url": "http://127.0.0.1:9/", "extract": {"v": ""# + "\(text.debugDescription.dropFirst().dropLast())" + #""}}, {"name": "b", "url": "{{v}}"}]}]"#
        if let scenario = try? Scenario(json: Data(json.utf8)) {
            var options = LoadOptions()
            options.scenario = scenario
            options.requests = 1
            _ = try? LoadRunner(options: options) // checks the options and prepares every request; sends nothing
        }
    }
    return 0
}

/// Whitespace-separated numbers as a user might give them: refused with a LoadError, or prepared.
private func runNumbers(_ text: String) {
    let numbers = text.split(whereSeparator: \.isWhitespace).map { Double($0) ?? 0 }
    func number(_ index: Int) -> Double { index < numbers.count ? numbers[index] : 0 }
    var options = LoadOptions()
    options.url = URL(string: "http://127.0.0.1:9/")
    if number(0) != 0 { options.rate = number(0) }
    options.duration = .seconds(Int64(clamping: Int(exactly: number(1).rounded()) ?? 10))
    options.concurrency = Int(exactly: number(2).rounded()) ?? 1
    if number(3) != 0, let stage = try? LoadStage(duration: .seconds(Int64(clamping: Int(exactly: number(3).rounded()) ?? 1)), target: number(4)) {
        options.ramp = LoadRamp(number(5) > 0 ? .rate : .concurrency, stages: [stage])
        options.duration = .zero
    }
    guard (try? LoadRunner.validate(options)) != nil else { return }
    _ = try? LoadRunner(options: options)
}

@_cdecl("FuzzLoad_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
