import CourierGenerator
import Foundation

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

// SwiftPM links executables against `FuzzDiscovery_main`; hand control to libFuzzer's driver from there.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

@_cdecl("FuzzDiscovery_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { fuzz($0, $1) }
}
