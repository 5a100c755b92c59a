import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the browser asked the loopback listener for.
struct LoopbackRequest: Sendable, Equatable {
    var method: String
    /// The request target: path and query, as sent.
    var target: String
}

/// The listener's answer to one request, and whether the sign-in ends with it.
struct LoopbackAnswer<Outcome: Sendable>: Sendable {
    var status: Int
    var page: String
    var outcome: Outcome?
}

/// A socket on `127.0.0.1`, an ephemeral port, for the one redirect a sign-in waits for
/// (RFC 8252 §7.3). It serves on a thread of its own, not the pool's: a person takes minutes to
/// consent, and the cooperative pool has a thread per core. A browser opens connections it never
/// uses (preconnects), so every connection is polled at once and none can hold up another.
final class LoopbackListener: @unchecked Sendable {
    let port: Int
    private let socket: Int32
    private let wake: (read: Int32, write: Int32)
    private static let largestRequest = 16 << 10

    init() throws(AuthError) {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Self.failure("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && listen(socket, 16) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        var pipe: [Int32] = [-1, -1]
        guard bound, Glibc.pipe(&pipe) == 0 else {
            Glibc.close(socket)
            throw Self.failure("listening on 127.0.0.1")
        }
        // The listening socket too: a connection reset between `poll` and `accept` would leave a
        // blocking `accept` waiting for the next one, past the timeout and out of cancellation's reach.
        for descriptor in pipe + [socket] { Self.configure(descriptor) }
        self.socket = socket
        wake = (pipe[0], pipe[1])
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Non-blocking, and closed in any child a tool spawns (Glibc's module has no `accept4`/`pipe2`).
    private static func configure(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    private static func failure(_ step: String) -> AuthError {
        AuthError(.transport, message: "cannot listen for the sign-in's redirect: \(step) failed (errno \(errno))")
    }

    /// Answers requests with `answer` until one ends the sign-in; nil when `timeout` passes first.
    /// A cancelled task ends it at once with `CancellationError`.
    func serve<Outcome: Sendable>(timeout: Duration,
                                  answer: @escaping @Sendable (LoopbackRequest) -> LoopbackAnswer<Outcome>) async throws -> Outcome? {
        let wakeWrite = wake.write
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome?, any Error>) in
                let thread = Thread { [self] in
                    continuation.resume(with: Result { try self.run(timeout: timeout, answer: answer) })
                }
                thread.name = "courier-sign-in"
                thread.start()
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    private func run<Outcome>(timeout: Duration, answer: (LoopbackRequest) -> LoopbackAnswer<Outcome>) throws -> Outcome? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var connections: [Int32: [UInt8]] = [:]
        defer { for connection in connections.keys { Glibc.close(connection) } }
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            descriptors += connections.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            // At most a second per wait: the deadline is rechecked, and no Int32 overflows.
            let milliseconds = Int32(min(remaining, .seconds(1)).seconds * 1000) + 1
            guard poll(&descriptors, nfds_t(descriptors.count), milliseconds) >= 0 || errno == EINTR else {
                throw Self.failure("poll")
            }
            if descriptors[1].revents != 0 { throw CancellationError() }
            if descriptors[0].revents & Int16(POLLIN) != 0 {
                let connection = accept(socket, nil, nil)
                if connection >= 0 {
                    Self.configure(connection)
                    connections[connection] = []
                }
            }
            for descriptor in descriptors.dropFirst(2) where descriptor.revents != 0 {
                let connection = descriptor.fd
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = recv(connection, &chunk, chunk.count, 0)
                guard count > 0 else {
                    if count == 0 || (errno != EAGAIN && errno != EINTR) {
                        Glibc.close(connection)
                        connections[connection] = nil
                    }
                    continue
                }
                connections[connection, default: []] += chunk[..<count]
                guard let buffered = connections[connection] else { continue }
                let request: LoopbackRequest
                if let parsed = Self.parse(buffered) {
                    request = parsed
                } else if buffered.count > Self.largestRequest {
                    request = LoopbackRequest(method: "", target: "")
                } else {
                    continue // the head is not complete yet
                }
                let reply = request.method.isEmpty ? LoopbackAnswer<Outcome>(status: 431, page: "Request too large", outcome: nil)
                    : answer(request)
                Self.send(reply.status, reply.page, on: connection)
                Glibc.close(connection)
                connections[connection] = nil
                if let outcome = reply.outcome { return outcome }
            }
        }
    }

    /// The request line of a complete head (up to the blank line), or nil while it is incomplete.
    static func parse(_ bytes: [UInt8]) -> LoopbackRequest? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("\r\n\r\n") || text.contains("\n\n"), let line = text.split(whereSeparator: \.isNewline).first else { return nil }
        let parts = line.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 2 else { return LoopbackRequest(method: "", target: "") }
        return LoopbackRequest(method: String(parts[0]), target: String(parts[1]))
    }

    private static func send(_ status: Int, _ page: String, on connection: Int32) {
        let body = Array("""
            <!doctype html><html><head><meta charset="utf-8"><title>\(HTMLText.escape(page))</title></head>\
            <body><p>\(HTMLText.escape(page))</p></body></html>
            """.utf8)
        let head = "HTTP/1.1 \(status) \(HTTPStatus.reason(status))\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + body
        var offset = 0
        var attempts = 0
        // The connection is non-blocking; a page this small fits a socket buffer at once, but a
        // slow reader gets a few tries, never a wait that could hold the sign-in.
        while offset < bytes.count, attempts < 100 {
            let sent = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return Glibc.send(connection, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 { offset += sent } else if errno == EAGAIN || errno == EINTR { attempts += 1; usleep(1000) } else { break }
        }
    }

    /// Stops listening: the port is closed when this returns.
    func close() {
        Glibc.close(socket)
        Glibc.close(wake.read)
        Glibc.close(wake.write)
    }
}
