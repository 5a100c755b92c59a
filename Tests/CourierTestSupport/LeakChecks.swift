@testable import Courier
import CourierTestServer
import Foundation
import Glibc
import Testing

// Leak checks that replace LeakSanitizer (off: it cannot see pointers Swift keeps in enum
// payloads). Three layers, each exact rather than timed:
// 1. After every service a test shuts down (this file's `withCheckedService`): no transfer, easy handle
//    or curl socket left (sockets are matched to the kernel by inode), and the service itself is
//    released, so no retain cycle keeps it, its loop thread or its curl handles alive.
// 2. When the test process ends: `LiveObjects` (Courier's own counters) must be back to zero.
// 3. The fault matrix also asks the kernel: no socket of this process still connected to the
//    test's server ports, and no download file open (`openDescriptors(connectedTo:)`).

/// Courier's `withService`, followed by the leak check (layer 1). Tests call this one (a
/// repository test refuses a bare `withService(` in Tests/), so every test's service is checked.
@discardableResult
package func withCheckedService<Result>(
    configuration: ServiceActor.Configuration = ServiceActor.Configuration(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (ServiceActor) async throws -> Result
) async throws -> Result {
    LeakCheck.installExitCheck()
    var service: ServiceActor? = try ServiceActor(configuration: configuration)
    let outcome: Swift.Result<Result, any Error>
    do { outcome = .success(try await body(service!)) } catch { outcome = .failure(error) }
    await service!.shutdown()
    let stats = await service!.stats
    #expect(stats.liveTransfers == 0 && stats.easyHandles == 0 && stats.openConnections == 0,
            "left behind by a service after shutdown: \(stats)")
    weak let released = service
    service = nil
    // A released service is gone at once; what may still hold it briefly is a task that is
    // finishing (a registry child, a token fetch), so this waits for the release, not for a time.
    #expect(await eventually { released == nil }, "a shut-down service was never released (a retain cycle?)")
    return try outcome.get()
}

package enum LeakCheck {
    /// Checks `LiveObjects` once the test process exits (layer 2); installed by the first service.
    package static func installExitCheck() {
        _ = exitCheck
    }

    private static let exitCheck: Void = {
        guard LiveObjects.isCounting else { return }
        atexit {
            // Services are shut down when their tests end; a task may still be letting go of one.
            let deadline = ContinuousClock.now + .seconds(10)
            while !LiveObjects.snapshot().isEmpty, ContinuousClock.now < deadline { usleep(10_000) }
            let live = LiveObjects.snapshot()
            guard !live.isEmpty else { return }
            let list = live.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            let message = "error: leak check: Courier objects still alive when the tests ended: \(list)\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            _exit(1)
        }
    }()
}

/// The whole text of a `/proc` file. Foundation's `String(contentsOfFile:)` returns only the
/// first read of it, one 4 KiB page: about 27 sockets of `/proc/net/tcp`, so a check that
/// used it went blind to every socket after those (and failed to see live ones under load).
package func readProcFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 << 10)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// This process's descriptors that are client sockets connected to one of `ports` (matched
/// through the inodes in `/proc/net/tcp` and `tcp6`), or files whose path contains `fileMarker`.
/// Tests run in parallel, so a plain count of `/proc/self/fd` would include other tests' descriptors.
package func openDescriptors(connectedTo ports: Set<Int>, fileMarker: String? = nil) -> [String] {
    var clientInodes = Set<Substring>()
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let text = readProcFile(table) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // fields[2] is the remote address: a client socket's remote port is the server's.
            guard fields.count > 9, let port = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                  ports.contains(port) else { continue }
            clientInodes.insert(fields[9])
        }
    }
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap { fd -> String? in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)") else { return nil }
        if target.hasPrefix("socket:["), clientInodes.contains(target.dropFirst(8).dropLast()) { return "\(fd) → \(target)" }
        if let fileMarker, target.contains(fileMarker) { return "\(fd) → \(target)" }
        return nil
    }
}
