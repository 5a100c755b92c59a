import Courier
import Foundation
import FuzzDriver

// Any input parses or throws JSONParsingError (within the depth and size limits); whatever
// parses serializes and parses back to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    guard let value = try? JSONValue(parsing: data, limits: JSONLimits(maxDepth: 64, maxBytes: 1 << 20)) else { return 0 }
    let again = try? JSONValue(parsing: value.serialized())
    precondition(again == value, "serialize/parse round trip changed the value")
    return 0
}

@_cdecl("FuzzJSON_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
