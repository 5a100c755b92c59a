import ArgumentParser
import Courier
import CourierSync
import CourierLoad
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the CLI needs from the terminal and the process: notes on stderr, signals, file limits.
enum Terminal {
    /// Whether a person is watching stderr, so a live progress line makes sense.
    static var isInteractive: Bool { isatty(STDERR_FILENO) == 1 }

    /// A line on stderr, leaving stdout to the result (so `--json > file` stays clean).
    static func note(_ line: String) {
        // A note that cannot be written (a closed or full stderr) is dropped rather than ending the run.
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Writes the run's result to stdout; a full disk or a closed pipe is an error the caller reports,
    /// not the crash `FileHandle.write(_:)` would make of it.
    static func print(_ data: Data) throws {
        do {
            try FileHandle.standardOutput.write(contentsOf: data)
        } catch {
            throw ValidationError("cannot write the result to stdout: \(error.localizedDescription)")
        }
    }

    /// Lifts the soft open-file limit to the hard one: every connection is a descriptor, and
    /// the usual soft limit of 1,024 is below what `-c 10000` needs.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Runs `body`, cancelling it on the first Ctrl-C so a run ends with the results so far;
    /// a second Ctrl-C exits at once with status 130, as shells expect.
    static func cancellingOnInterrupt<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        let interrupts = LockedValue(0)
        let source = signalSource(SIGINT) {
            if interrupts.increment() == 1 {
                note("\ncourier: interrupted; finishing (Ctrl-C again to quit)")
                task.cancel()
            } else {
                exit(130)
            }
        }
        defer {
            source.cancel()
            signal(SIGINT, SIG_DFL)
        }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Returns on the first SIGINT or SIGTERM.
    static func waitForInterrupt() async {
        let sources = LockedValue<[any DispatchSourceSignal]>([]) // kept alive until cancelled
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = LockedValue(0)
            let resume: @Sendable () -> Void = {
                if once.increment() == 1 { continuation.resume() }
            }
            sources.withLock { $0 = [signalSource(SIGINT, resume), signalSource(SIGTERM, resume)] }
        }
        sources.withLock { $0.forEach { $0.cancel() }; $0 = [] }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    /// Delivers `signal` on a dispatch queue instead of its default action.
    private static func signalSource(_ number: Int32, _ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }
}

extension LockedValue<Int> {
    /// Counts one more signal; returns the count so far.
    fileprivate func increment() -> Int { withLock { $0 += 1; return $0 } }
}

/// The live progress line on stderr: redrawn in place, cleared before the summary prints.
final class LiveProgress: Sendable {
    private let shown = LockedValue(false)

    func show(_ progress: LoadProgress) {
        shown.withLock { shown in
            shown = true
            try? FileHandle.standardError.write(contentsOf: Data(("\r\u{1B}[2K" + LoadReport.progressLine(progress)).utf8))
        }
    }

    func clear() {
        shown.withLock { shown in
            if shown { try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[2K".utf8)) }
            shown = false
        }
    }
}
