@testable import Courier
import CourierSync
import Foundation
import Logging

/// Everything the suite logs, kept on disk so `make test` can scan it for secrets afterwards
/// (`Scripts/secret-scan.sh`): every service's log lines at trace level, every HTTP log file,
/// and the output of every child process the tests run.
///
/// Test credentials carry ``marker`` (the test token server mints tokens with it too); secrets
/// that cannot, such as generated private keys, are listed with ``registerSecret(_:)``. A hit
/// anywhere in the folder fails `make test`.
package enum SuiteLog {
    /// In every test credential, so a leak is found even where the exact value is unknown.
    package static let marker = "s3kr1t"

    /// `COURIER_TEST_LOG_DIR`, or `.build/test-logs` in the package.
    package static let directory: URL = {
        let url: URL
        if let path = ProcessInfo.processInfo.environment["COURIER_TEST_LOG_DIR"], !path.isEmpty {
            url = URL(fileURLWithPath: path)
        } else {
            url = Repository.path(".build/test-logs")
        }
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// One file of log lines per test process.
    private static let lines = AppendOnlyFile(directory.appendingPathComponent("courier-\(getpid()).log"))
    private static let secrets = AppendOnlyFile(directory.appendingPathComponent("secrets/registered-\(getpid()).txt"))

    /// A trace-level logger that appends to this process's log file.
    package static var logger: Logger {
        var logger = Logger(label: "courier") { label in LineLogHandler(label: label) { lines.append($0 + "\n") } }
        logger.logLevel = .trace
        return logger
    }

    /// HTTP logging into a folder of the suite's own.
    package static func httpLog() -> HTTPLogOptions {
        HTTPLogOptions(directory: directory.appendingPathComponent("http/\(UUID().uuidString)"))
    }

    /// Keeps what a child process printed.
    package static func recordOutput(of executable: URL, stdout: Data, stderr: String) {
        let file = directory.appendingPathComponent("processes/\(executable.lastPathComponent)-\(UUID().uuidString.prefix(8)).txt")
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? (stdout + Data(("\n--- stderr ---\n" + stderr).utf8)).write(to: file)
    }

    /// A secret that cannot carry ``marker``; the scan looks for it verbatim.
    package static func registerSecret(_ secret: String) {
        guard secret.count >= 8 else { return } // shorter strings would match by chance
        secrets.append(secret + "\n")
    }
}

extension ServiceActor.Configuration {
    /// The default configuration, logging into ``SuiteLog``. Every service in the suite starts here.
    package static func suite() -> Self {
        var configuration = Self()
        configuration.telemetry.logger = SuiteLog.logger
        configuration.telemetry.httpLog = SuiteLog.httpLog()
        return configuration
    }
}

/// A file that many threads append lines to.
package final class AppendOnlyFile: Sendable {
    private let handle: LockedValue<FileHandle?>

    package init(_ url: URL) {
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = LockedValue(try? FileHandle(forWritingTo: url))
    }

    package func append(_ text: String) {
        handle.withLock { handle in
            handle?.seekToEndOfFile()
            handle?.write(Data(text.utf8))
        }
    }
}

/// Renders each log event as one line — level, label, message, metadata — and hands it to `write`.
package struct LineLogHandler: LogHandler {
    package let label: String
    package let write: @Sendable (String) -> Void
    package var metadata: Logger.Metadata = [:]
    package var logLevel: Logger.Level = .trace

    package init(label: String, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.write = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        write("\(event.level) \(label) \(event.message) \(fields)")
    }
}
