import Courier
import Foundation

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

// SwiftPM links executables against `FuzzJSON_main`; hand control to libFuzzer's driver from there.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

@_cdecl("FuzzJSON_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { fuzz($0, $1) }
}
