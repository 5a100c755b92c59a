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

    /// A new folder for one browser's profile and its temporary files (`TMPDIR`): ended by SIGTERM,
    /// Chromium leaves its singleton folder (`org.chromium.Chromium.*`) in its temporary directory.
    /// The name is short because Chromium makes a Unix socket two levels below it, and a socket's
    /// path holds at most 107 bytes (a longer one and the browser never loads its page).
    package static func makeFolder() throws -> URL {
        let name = "chromium-" + String(UInt32.random(in: .min ... .max), radix: 16)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        return folder
    }

    /// The browser's arguments before the page: headless, with `profile` as its profile, without
    /// its sandbox (the suite may run as root), a GPU, or anything it would fetch by itself.
    package static func arguments(profile: URL) -> [String] {
        ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-dev-shm-usage", "--user-data-dir=\(profile.path)"]
    }

    /// Removes a folder from `makeFolder()` once nothing writes to it any more: the browser's helper
    /// processes (zygote, network service, renderers) can outlive it and write there as they end (a
    /// removed profile came back as `Default/Cache/Cache_Data`, in CI's temporary-folder check). They
    /// inherit the browser's environment, so they are found by the `TMPDIR` it was given: waited
    /// for, for 10 s at most, then killed.
    package static func removeFolder(_ folder: URL) async {
        let marker = Array("TMPDIR=\(folder.path)".utf8)
        for _ in 0..<100 where !processes(inheriting: marker).isEmpty {
            try? await Task.sleep(for: .milliseconds(100))
        }
        for pid in processes(inheriting: marker) { kill(pid, SIGKILL) }
        for _ in 0..<50 {
            try? FileManager.default.removeItem(at: folder)
            try? await Task.sleep(for: .milliseconds(100))
            if !FileManager.default.fileExists(atPath: folder.path) { return }
        }
    }

    /// The processes whose environment holds `entry` (`NAME=value`, exactly), read from `/proc`.
    private static func processes(inheriting entry: [UInt8]) -> [pid_t] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), pid != getpid(),
                  let environment = FileManager.default.contents(atPath: "/proc/\(name)/environ") else { return nil }
            return environment.split(separator: 0).contains { $0.elementsEqual(entry) } ? pid : nil
        }
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
/// The browser runs with a throwaway profile (`Chromium.makeFolder()`, `Chromium.arguments`);
/// `body` observes what the page did from the server's side.
package func withChromium<T: Sendable>(showing page: URL, _ body: () async throws -> T) async throws -> T {
    let binary = try Chromium.binary()
    let profile = try Chromium.makeFolder()
    let outcome: Result<T, any Error>
    do {
        outcome = .success(try await Chromium.oneAtATime {
            try await withChildProcess(binary, Chromium.arguments(profile: profile) + [page.absoluteString],
                                       environment: ["TMPDIR": profile.path]) { _ in try await body() }.value
        })
    } catch {
        outcome = .failure(error)
    }
    await Chromium.removeFolder(profile)
    return try outcome.get()
}
