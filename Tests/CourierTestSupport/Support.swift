@testable import Courier
import CourierSync
import CourierTestServer
import Foundation
import Glibc
import Subprocess
import SystemPackage
import Synchronization
import Testing

/// Runs `body` with a fresh test server and a fresh service, and stops both afterwards.
@discardableResult
package func withServerAndService<Result>(
    configure: (inout ServiceActor.Configuration) -> Void = { _ in },
    _ body: (TestServer, ServiceActor) async throws -> Result
) async throws -> Result {
    var configuration = ServiceActor.Configuration.suite()
    configure(&configuration)
    return try await withTestServer { server in
        try await withCheckedService(configuration: configuration) { service in
            try await body(server, service)
        }
    }
}

/// Asserts the service holds nothing: no live transfer, every handle back in the pool.
package func expectNoLeaks(_ service: ServiceActor, sourceLocation: SourceLocation = #_sourceLocation) async {
    let stats = await service.stats
    #expect(stats.liveTransfers == 0, "live transfers: \(stats)", sourceLocation: sourceLocation)
    #expect(stats.runningTransfers == 0, "running transfers: \(stats)", sourceLocation: sourceLocation)
    #expect(stats.easyHandles == stats.pooledHandles, "handles in use: \(stats)", sourceLocation: sourceLocation)
}

/// A reference to a value, so `#expect` can wrap a mutating call (it cannot on a local `var`).
package final class Box<Value> {
    package var value: Value
    package init(_ value: Value) { self.value = value }
    /// Runs a mutating step: `#expect(machine { $0.start() } == .attach)`.
    package func callAsFunction<R>(_ step: (inout Value) -> R) -> R { step(&value) }
}

/// Polls `condition` every 10 ms for up to `seconds`: generous, because it returns as soon as the
/// condition holds, and the bound only turns a hang into a failure. Under ThreadSanitizer on a
/// loaded 2-core machine an 8 MiB chunk took more than 20 s to finish before a pause took hold.
package func eventually(within seconds: Double = 90, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// Opens the server's gate `name` once `count` requests wait at it: a test of a concurrency limit
/// sees the limit reached however slowly the requests start, and the 100 ms before opening give a
/// request past the limit time to show in `maxInFlight`. Opens it even when the count never comes
/// (that is a failure), so the requests end instead of hanging the test.
package func openGate(_ name: String, of server: TestServer, when count: Int,
                      sourceLocation: SourceLocation = #_sourceLocation) async throws {
    #expect(await eventually { server.counters.inFlight == count }, sourceLocation: sourceLocation)
    try await Task.sleep(for: .milliseconds(100))
    server.gates.open(name)
}

/// A listener whose accept queue is full, so a connect to it hangs in SYN_SENT: the
/// "connecting" stage, held for as long as a test needs.
package final class BlackholeListener: Sendable {
    package let port: Int
    private let listener: Int32
    private let fillers: [Int32]

    package init() {
        let (listener, bound) = loopbackListener(backlog: 0)
        self.listener = listener
        port = Int(UInt16(bigEndian: bound.sin_port))
        var fillers: [Int32] = []
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var target = bound
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fillers.append(filler)
        }
        self.fillers = fillers
        usleep(100_000)
    }

    package var url: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    deinit {
        for filler in fillers { close(filler) }
        close(listener)
    }
}

/// A listener that never accepts: the kernel completes TCP handshakes into its backlog, so a
/// client connects and then hears nothing (a TLS handshake that never gets an answer).
package final class SilentListener: Sendable {
    package let port: Int
    private let listener: Int32

    package init() {
        let (listener, bound) = loopbackListener(backlog: 16)
        self.listener = listener
        port = Int(UInt16(bigEndian: bound.sin_port))
    }

    deinit { close(listener) }
}

/// A TCP socket listening on 127.0.0.1 on a port the kernel chose, and its address.
private func loopbackListener(backlog: Int32) -> (descriptor: Int32, address: sockaddr_in) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    listen(listener, backlog)
    var bound = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &bound) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
    }
    return (listener, bound)
}

/// A port with nothing listening: bound, then closed.
package func unusedPort() -> Int {
    // Below the kernel's ephemeral range (32768–60999), so no listener bound to port 0 — our
    // own test servers run in parallel — and no outgoing connection can take it meanwhile.
    while true {
        let port = Int.random(in: 20_000..<32_000)
        if withLoopbackSocket(port: port, bind) == 0 { return port }
    }
}

/// Calls `bind` or `connect` with a fresh TCP socket and 127.0.0.1:`port`; closes the socket.
package func withLoopbackSocket(port: Int, _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    return withLoopbackAddress(port: port) { call(descriptor, $0, $1) }
}

/// A TCP socket connected to 127.0.0.1:`port` (nil if the connect failed); the caller closes it.
package func connectedLoopbackSocket(port: Int) -> Int32? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard withLoopbackAddress(port: port, { connect(descriptor, $0, $1) }) == 0 else {
        close(descriptor)
        return nil
    }
    return descriptor
}

private func withLoopbackAddress(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

/// The body `/echo` returns.
package struct Echo: Decodable {
    package var method: String
    package var path: String
    package var query: String
    package var headers: [[String]]
    package var body: String
    package var bodyLength: Int
    package var bodyHash: String

    package func header(_ name: String) -> String? {
        headers.first { $0[0].lowercased() == name.lowercased() }?[1]
    }

    package init(_ response: HTTPResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: response.body)
    }
}

extension TestPattern.Hasher {
    package static func of(_ data: Data) -> TestPattern.Hasher {
        var hasher = TestPattern.Hasher()
        hasher.update(data)
        return hasher
    }
}

/// Runs `body` on a thread of its own. Blocking work (waiting for a child process, writing or
/// hashing a gibibyte) must not hold one of the few cooperative threads, which also run the
/// in-process test servers: on two cores, two such waits starve every server in the process.
package func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}


/// Runs a child process to completion; returns its exit status (the signal's number if a
/// signal ended it) and stdout. What it printed is kept in the suite's log (``SuiteLog``) unless
/// `record` is false. After `timeout` seconds coreutils' `timeout` ends it (status 124).
///
/// swift-subprocess, not Foundation's `Process`: `Process.run()` reads past a buffer on Linux
/// and crashed this suite about one run in five (swiftlang/swift-corelibs-foundation#5472).
package func runProcess(_ executable: URL, _ arguments: [String], timeout: Double = 600, record: Bool = true,
                environment: [String: String?]? = nil) async throws -> (status: Int32, output: Data, error: String) {
    let result = try await Subprocess.run(
        .path("/usr/bin/timeout"), arguments: Arguments(["--kill-after=10", "\(Int(timeout.rounded(.up)))", executable.path] + arguments),
        environment: .inheriting(environment ?? [:]), output: .bytes(limit: 1 << 30), error: .string(limit: 64 << 20))
    let data = Data(result.standardOutput)
    let errorText = result.standardError
    if record { SuiteLog.recordOutput(of: executable, stdout: data, stderr: errorText) }
    return (result.terminationStatus.code, data, errorText)
}

/// Runs `body` while a child process (a peer server, the test helper) runs, then ends the
/// process with SIGTERM (if it still runs) and waits for it. `body` gets the process's ID.
/// `environment` overrides the suite's own for the child (a nil value unsets a variable).
@discardableResult
package func withChildProcess<T: Sendable>(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
                         _ body: (_ pid: pid_t) async throws -> T) async throws -> (value: T, status: TerminationStatus) {
    let result = try await Subprocess.run(.path(FilePath(executable)), arguments: Arguments(arguments),
                                          environment: .inheriting(environment),
                                          input: .none, output: .discarded, error: .discarded) { execution in
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body(execution.processIdentifier.value)) } catch { outcome = .failure(error) }
        try? execution.send(signal: .terminate)
        return outcome
    }
    return (try result.closureResult.get(), result.terminationStatus)
}

extension Environment {
    /// The suite's environment with `overrides` applied (a nil value unsets a variable).
    static func inheriting(_ overrides: [String: String?]) -> Environment {
        var keyed: [Environment.Key: String?] = [:]
        for (name, value) in overrides { keyed[Environment.Key(stringLiteral: name)] = value }
        return .inherit.updating(keyed)
    }
}

/// Whether the process `pid` still runs (or has ended and not yet been reaped).
package func isRunning(_ pid: pid_t) -> Bool {
    kill(pid, 0) == 0
}

/// Waits until the process `pid`, which may not be this process's child, has ended (a zombie
/// counts as ended: its parent may never reap it), for at most `seconds`. False if it still runs.
package func waitUntilEnded(_ pid: pid_t, seconds: Double = 10) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        // /proc/PID/stat: "PID (name) STATE ...": the state follows the name's closing parenthesis.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        if stat[close...].dropFirst().trimmingCharacters(in: .whitespaces).hasPrefix("Z") { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return false
}

extension TerminationStatus {
    /// The exit code, or the number of the signal that ended the process.
    package var code: Int32 {
        switch self {
        case .exited(let code): code
        case .signaled(let signal): signal
        }
    }
}

/// True once `port` on 127.0.0.1 accepts connections while the process `pid` (a peer server)
/// still runs.
package func waitForListener(port: Int, while pid: pid_t) async -> Bool {
    for _ in 0..<200 {
        guard isRunning(pid) else { return false }
        if withLoopbackSocket(port: port, connect) == 0 {
            // A listener that is not the process's own also accepts; the process then exits on its failed bind.
            try? await Task.sleep(for: .milliseconds(50))
            return isRunning(pid)
        }
        try? await Task.sleep(for: .milliseconds(25))
    }
    return false
}

/// Adds `X-Courier-Fault` to every authorized request and counts invalidations.
package final class FaultInjector: Authorizer {
    package let fault: String
    package let run = UUID().uuidString
    package let invalidations = Atomic<Int>(0)
    package init(_ fault: String) { self.fault = fault }
    package var header: String { "\(fault);run=\(run)" }
    package func authorize(_ request: inout HTTPRequest) async throws { request.headers["X-Courier-Fault"] = header }
    package func invalidate(_ rejected: HTTPRequest) async { invalidations.add(1, ordering: .relaxed) }
}

/// Writes `text` to `url` as an executable script (mode 0700) through a descriptor opened with
/// `O_CLOEXEC`. Foundation's `Data.write` opens without it, so a process another test spawned in
/// that instant inherited the descriptor, kept the file open for writing, and running the script
/// then failed with "Text file busy" (ETXTBSY): once in the ASan suite.
package func writeExecutable(_ text: String, to url: URL) throws {
    let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o700)
    guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
        let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        written += count
    }
    guard fchmod(descriptor, 0o700) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}
