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
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let selector = start[0] % 7
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

@_cdecl("FuzzLoad_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
