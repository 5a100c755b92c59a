import Courier
import Foundation
import FuzzDriver

// The first line is the template, the rest are name=value variables. Expansion succeeds or
// throws QueryError; a simple `{var}` value never leaves its path segment, and no value, as a
// string through `{+var}` or as a list (split at commas) through `{/var*}`, makes a path
// segment that is `.` or `..`.
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
        let list = URITemplate.Value.list(value.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
        for expanded in [try? URITemplate("o/{+v}").expand(["v": value]), try? URITemplate("o{/v*}").expand(["v": list])] {
            guard let expanded else { continue }
            let path = expanded.prefix { $0 != "?" && $0 != "#" }
            precondition(!path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == "." || $0 == ".." },
                         "a value made a dot segment: \(expanded)")
        }
    }
    return 0
}

@_cdecl("FuzzURITemplate_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
