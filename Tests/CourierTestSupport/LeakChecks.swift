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

/// This process's descriptors that are client sockets connected to one of `ports` (the peer's
/// port, from `getpeername`), or files whose path contains `fileMarker`. Tests run in parallel, so
/// a plain count of `/proc/self/fd` would include other tests' descriptors.
///
/// Only this process's own descriptors are asked. (It used to parse `/proc/net/tcp`, which lists
/// every socket of the machine, TIME_WAIT included: polled every 10 ms by `eventually`, that
/// parse was the suite's largest CPU consumer on the cooperative pool.)
package func openDescriptors(connectedTo ports: Set<Int>, fileMarker: String? = nil) -> [String] {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap { name -> String? in
        guard let fd = Int32(name),
              let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)") else { return nil }
        if target.hasPrefix("socket:["), let port = peerPort(of: fd), ports.contains(port) { return "\(fd) → \(target)" }
        if let fileMarker, target.contains(fileMarker) { return "\(fd) → \(target)" }
        return nil
    }
}

/// The remote port of a connected TCP socket, or nil (not connected, not IP, or closed meanwhile).
private func peerPort(of descriptor: Int32) -> Int? {
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let result = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
    }
    guard result == 0 else { return nil }
    return withUnsafePointer(to: &address) { pointer -> Int? in
        switch Int32(pointer.pointee.ss_family) {
        case AF_INET:
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        case AF_INET6:
            pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
        default:
            nil
        }
    }
}
