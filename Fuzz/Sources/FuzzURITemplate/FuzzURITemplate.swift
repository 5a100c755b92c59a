import Courier
import Foundation
import FuzzDriver

// The first line is the template, the rest are name=value variables. Expansion succeeds or
// throws QueryError; a simple `{var}` value never leaves its path segment.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard !lines.isEmpty else { return 0 }
    let template = URITemplate(lines.removeFirst())
    var variables: [String: String] = [:]
    for line in lines {
        let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        variables[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
    }
    _ = try? template.expand(variables)
    _ = try? template.expand(variables, requireAll: true)
    if let value = variables["v"], let expanded = try? URITemplate("a/{v}/b").expand(["v": value]) {
        precondition(expanded.split(separator: "/", omittingEmptySubsequences: false).count == 3,
                     "a {var} value escaped its segment: \(expanded)")
    }
    return 0
}

@_cdecl("FuzzURITemplate_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
