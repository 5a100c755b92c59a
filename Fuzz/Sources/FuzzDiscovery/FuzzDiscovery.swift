import CourierGenerator
import Foundation
import FuzzDriver

// The whole generator on arbitrary input: a module comes out, or a GeneratorError; never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    do {
        let module = try Generator.generate(discovery: data, moduleName: "Fuzzed")
        precondition(module.files.count == 3)
    } catch is GeneratorError {
    } catch {
        preconditionFailure("not a GeneratorError: \(error)")
    }
    return 0
}

@_cdecl("FuzzDiscovery_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
