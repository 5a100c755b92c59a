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
///
/// It returns only once the task has let go of `work` too (and so of the input it captured):
/// the task signals before it releases its closure, and LeakSanitizer, checking the moment the
/// input returns, reported the input's `Data` as leaked now and then (FuzzSigning, 1 in 3,981
/// inputs in one CI run).
public func runToCompletion(_ work: @escaping @Sendable () async -> Void) {
    final class Token: Sendable {}
    let done = DispatchSemaphore(value: 0)
    var token: Token? = Token()
    weak let held = token
    Task { [token] in
        _ = token // the task's closure holds it, and `work`, until the task lets go of both
        await work()
        done.signal()
    }
    token = nil
    done.wait()
    // At most a second: something else may hold `work` on purpose (none of the targets does).
    var waited = 0
    while held != nil, waited < 10_000 {
        usleep(100)
        waited += 1
    }
}

/// Removes what a download to `path` can leave (Docs/Uploads.md): the file, its data while it
/// arrives (`.courier-download`) and its resume record (`.courier-partial`). The two stay from
/// one input to the next, so an input can resume what an earlier one left; a target calls this
/// when libFuzzer exits.
public func removeDownload(at path: String) {
    for file in [path, path + ".courier-download", path + ".courier-partial"] { unlink(file) }
}
