import Dispatch
import Glibc

// SwiftPM links each executable against `<Target>_main`, so libFuzzer's own `main` never runs:
// each target's `<Target>_main` hands control to libFuzzer's driver through `runFuzzer`.

@_silgen_name("LLVMFuzzerRunDriver")
private func llvmFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                 _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

/// Runs libFuzzer on `test` with the process's arguments (`-max_total_time=…`, corpus folders).
public func runFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                      test: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt {
    var count = argc
    var arguments = argv
    return llvmFuzzerRunDriver(&count, &arguments, test)
}

/// Runs `work` in a task and blocks until it ends: libFuzzer calls each input synchronously.
public func runToCompletion(_ work: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await work()
        done.signal()
    }
    done.wait()
}

/// Removes what a download to `path` can leave (Docs/Uploads.md): the file, its data while it
/// arrives (`.courier-download`) and its resume record (`.courier-partial`). The two stay from
/// one input to the next, so an input can resume what an earlier one left; a target calls this
/// when libFuzzer exits.
public func removeDownload(at path: String) {
    for file in [path, path + ".courier-download", path + ".courier-partial"] { unlink(file) }
}
