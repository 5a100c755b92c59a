import Foundation
import Testing

/// Headless Chromium from Debian's package (`make test` installs it): a real browser for the
/// flows a browser performs (an HTML form upload, a sign-in redirect).
package enum Chromium {
    package static func binary() throws -> String {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            for directory in ["/usr/bin", "/usr/local/bin", "/snap/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        throw ChromiumError.notInstalled
    }

    /// Runs `body` while no other test's browser runs: a starting Chromium takes both cores of a
    /// 2-core machine for a second or more, and several at once starved the suite's in-process
    /// servers (a metadata-server probe missed its four tries).
    package static func oneAtATime<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await gate.enter()
        do {
            let value = try await body()
            await gate.leave()
            return value
        } catch {
            await gate.leave()
            throw error
        }
    }

    private static let gate = Gate()

    private actor Gate {
        private var busy = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        func enter() async {
            guard busy else { busy = true; return }
            await withCheckedContinuation { waiters.append($0) }
        }

        func leave() {
            if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
        }
    }

    package enum ChromiumError: Error, CustomStringConvertible {
        case notInstalled
        package var description: String {
            "Chromium is not installed: run `make test` (or `apt-get install chromium`)"
        }
    }
}

/// Runs `body` while headless Chromium shows `page` (a file or http URL), then ends the browser.
/// The browser runs with a throwaway profile, without its sandbox (the suite may run as root)
/// and without a GPU; `body` observes what the page did from the server's side.
package func withChromium<T: Sendable>(showing page: URL, _ body: () async throws -> T) async throws -> T {
    let binary = try Chromium.binary()
    let profile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-chromium-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: profile) }
    return try await Chromium.oneAtATime {
        try await withChildProcess(binary, [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--disable-background-networking", "--disable-dev-shm-usage", "--user-data-dir=\(profile.path)", page.absoluteString,
        ]) { _ in try await body() }.value
    }
}
