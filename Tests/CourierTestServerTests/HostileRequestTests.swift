import CourierTestServer
import CourierTestSupport
import Foundation
import Glibc
import Testing

/// `courier serve` answers whoever reaches it, so no request may stop it. Every number a request
/// chooses (a status to answer, a size, a count, a range, a body's length) is checked before
/// the server uses it (`ClientNumber`). Each request in the first table stopped the process
/// before that; the sweep sends every such number the server reads, each with the values that
/// break arithmetic, to `courier serve` itself, and names the request if the process dies.
@Suite struct HostileRequestTests {
    /// One request as it goes on the wire, `Connection: close`, a body's length declared.
    static func wire(_ method: String, _ target: String, headers: [String] = [], body: String = "") -> String {
        let declared = headers.contains { $0.lowercased().hasPrefix("content-length:") }
        let fields = ["Host: 127.0.0.1", "Connection: close"] + headers + (declared || body.isEmpty ? [] : ["Content-Length: \(body.utf8.count)"])
        return "\(method) \(target) HTTP/1.1\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n" + body
    }

    /// The response's head (nil if none came within `seconds`, or the connection closed first);
    /// throws when nothing listens on `port`.
    static func exchange(port: Int, _ request: String, seconds: Int = 5) async throws -> String? {
        try await onOwnThread {
            guard let socket = connectedLoopbackSocket(port: port) else { throw Refused(port: port) }
            defer { close(socket) }
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            // The head only: a body may be endless (`/bytes/9223372036854775807`).
            while received.count < 64 << 10, !received.suffix(4).elementsEqual("\r\n\r\n".utf8) {
                let count = recv(socket, &buffer, 1, 0)
                guard count > 0 else { break }
                received.append(buffer[0])
            }
            return received.isEmpty ? nil : String(decoding: received, as: UTF8.self)
        }
    }

    struct Refused: Error { var port: Int }

    static func status(_ head: String?) -> Int? {
        head.flatMap { $0.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } }
    }

    // MARK: What stopped the server before

    @Test(arguments: [
        (wire("GET", "/status/1000"), 400), (wire("GET", "/status/-1"), 400), (wire("GET", "/status/99"), 400),
        (wire("GET", "/redirect-to?url=/echo&status=1000"), 400),
        (wire("GET", "/stall?bytes=-1"), 400), (wire("GET", "/stall?bytes=4611686018427387904"), 400),
        (wire("GET", "/drip?bytes=4&chunk=1000000000"), 400), (wire("GET", "/bytes/-1"), 400),
        (wire("GET", "/echo", headers: ["X-Courier-Fault: 1000x1"]), 400),
        (wire("GET", "/echo", headers: ["X-Courier-Fault: -1x1"]), 400),
        (wire("GET", "/notes/v1/notes?pageToken=page--1"), 400),
        (wire("GET", "/notes/v1/notes?pageToken=page-9223372036854775807"), 400),
        (wire("GET", "/notes/v1/flaky/hostile?status=1000"), 400),
        (wire("POST", "/notes/v1/seed?count=9223372036854775807"), 400),
        (wire("POST", "/upload/files/v1/files?uploadType=resumable&name=hostile-partial&partial=-1"), 400),
        (wire("POST", "/upload/files/v1/files?uploadType=resumable&name=hostile-fail&fail=1:1000"), 400),
        (wire("POST", "/upload/files/v1/files?uploadType=resumable&name=hostile-total", headers: ["X-Upload-Content-Length: -5"]), 400),
    ])
    func aNumberOutOfRangeIsRefusedAndTheServerGoesOn(request: String, status: Int) async throws {
        try await withTestServer { server in
            let port = try #require(server.baseURL.port)
            let head = try await Self.exchange(port: port, request)
            #expect(Self.status(head) == status, "\(request.prefix(80)): \(head ?? "no answer")")
            #expect(Self.status(try await Self.exchange(port: port, Self.wire("GET", "/echo"))) == 200)
        }
    }

    @Test func aRangeThatEndsBeforeItStartsIsUnsatisfiable() async throws {
        try await withTestServer { server in
            let port = try #require(server.baseURL.port)
            let stored = try #require(try await Self.exchange(port: port, Self.wire("POST", "/upload/files/v1/files?uploadType=media&name=r",
                                                                                   body: "hello world")))
            #expect(Self.status(stored) == 200)
            // The server's first file on a fresh server.
            for range in ["bytes=5-2", "bytes=0-x"] {
                let head = try await Self.exchange(port: port, Self.wire("GET", "/download/files/v1/files/file-1", headers: ["Range: \(range)"]))
                #expect(Self.status(head) == 416, "\(range): \(head ?? "no answer")")
                #expect(head?.contains("Content-Range: bytes */11") == true)
            }
            #expect(Self.status(try await Self.exchange(port: port, Self.wire("GET", "/download/files/v1/files/file-1",
                                                                            headers: ["Range: bytes=6-"]))) == 206)
        }
    }

    @Test func aBatchPartWithANegativeLengthIsRefused() async throws {
        try await withTestServer { server in
            let port = try #require(server.baseURL.port)
            let part = "GET /notes/v1/notes HTTP/1.1\r\nContent-Length: -1\r\n\r\n"
            let body = "--b\r\nContent-Type: application/http\r\nContent-ID: <1>\r\n\r\n\(part)\r\n--b--\r\n"
            let request = Self.wire("POST", "/batch/notes/v1", headers: ["Content-Type: multipart/mixed; boundary=b"], body: body)
            let socket = try #require(connectedLoopbackSocket(port: port))
            defer { close(socket) }
            _ = Array(request.utf8).withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            let answer = try await onOwnThread { () -> String in
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 16 << 10)
                while true {
                    let count = recv(socket, &buffer, buffer.count, 0)
                    guard count > 0 else { break }
                    received += buffer[0..<count]
                }
                return String(decoding: received, as: UTF8.self)
            }
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(answer.contains("HTTP/1.1 400") && answer.contains("a part's Content-Length is -1"), "\(answer)")
        }
    }

    /// The raw listener reads requests itself: a length it would wait for and keep, and a head
    /// that never ends, are refused before any arithmetic.
    @Test(arguments: ["a negative length", "a length past Int", "a drop session's negative length", "a head that never ends"])
    func theRawListenerRefusesWhatItCannotHold(what: String) async throws {
        let request = switch what {
        case "a negative length": Self.wire("PUT", "/x", headers: ["X-Courier-Fault: keepalive-then-drop", "Content-Length: -1000"])
        case "a length past Int": Self.wire("PUT", "/x", headers: ["X-Courier-Fault: keepalive-then-drop", "Content-Length: 9223372036854775807"])
        case "a drop session's negative length":
            Self.wire("PUT", "/upload-drop/upload/files/v1/files?upload_id=none", headers: ["Content-Length: -100000"])
        default: "GET / HTTP/1.1\r\nX-Long: " + String(repeating: "a", count: 70 << 10)
        }
        try await withTestServer { server in
            let port = try #require(server.faultURL.port)
            let head = try await Self.exchange(port: port, request)
            #expect(Self.status(head) == 400, "\(request.prefix(80)): \(head ?? "no answer")")
            let next = try await Self.exchange(port: port, Self.wire("GET", "/close-after-response"))
            #expect(Self.status(next) == 200)
        }
    }

    /// The storage testbench's instructions carry numbers too; a plan with one out of range is
    /// refused when it is made, not met as a trap when a request reaches it.
    @Test func aRetryTestWithAnInstructionOutOfRangeIsRefused() async throws {
        let testbench = try await StorageTestbench.start()
        let port = try #require(testbench.baseURL.port)
        for (instruction, status) in [("return-1000", 400), ("return-99", 400), ("return-broken-stream-after--5K", 400),
                                      ("return-broken-stream-after-99999999999999999K", 400), ("return-503-after-9223372036854775807K", 400),
                                      ("return-broken-stream-final-chunk-after-99999999999999999999B", 400),
                                      ("return-broken-stream-final-chunk-after--1B", 400), ("stall-for-9223372036854775807s-after-1K", 400),
                                      ("stall-for-1s-after-99999999999999999K", 400), ("stall-for--1s-after-1K", 400),
                                      ("return-503", 200), ("return-broken-stream-after-256K", 200), ("return-503-after-256K", 200),
                                      ("return-broken-stream-final-chunk-after-10B", 200), ("stall-for-2s-after-128K", 200)] {
            let body = #"{"instructions":{"storage.objects.get":["\#(instruction)"]}}"#
            let head = try await Self.exchange(port: port, Self.wire("POST", "/retry_test", headers: ["Content-Type: application/json"], body: body))
            #expect(Self.status(head) == status, "\(instruction): \(head ?? "no answer")")
        }
        await testbench.stop()
    }

    // MARK: Every number the server reads, as `courier serve`

    /// The values that break arithmetic, each put where the server reads a number.
    static let hostile = ["-1", "0", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "1000", "+5"]

    /// Requests with `N` where a number goes: every path segment, query parameter and header the
    /// main listener reads as one. `SESSION` is a resumable upload's path and query.
    static let templates: [(method: String, target: String, headers: [String], body: String)] = [
        ("GET", "/status/N", [], ""), ("GET", "/bytes/N", [], ""), ("HEAD", "/bytes/N", [], ""), ("GET", "/chunked/N", [], ""),
        ("GET", "/delay/N", [], ""), ("GET", "/redirect/N", [], ""), ("GET", "/redirect-to?url=/echo&status=N", [], ""),
        ("GET", "/drip?bytes=N&interval=0", [], ""), ("GET", "/drip?bytes=8&chunk=N&interval=0", [], ""),
        ("GET", "/drip?bytes=2&interval=N", [], ""), ("GET", "/stall?bytes=N&seconds=0", [], ""),
        ("GET", "/stall?bytes=1&seconds=N", [], ""), ("GET", "/json/N", [], ""), ("GET", "/sometimes-wrong/k?every=N", [], ""),
        ("GET", "/notes/v1/aggregated/notes?pageToken=N", [], ""), ("GET", "/notes/v1/notes?maxResults=N", [], ""),
        ("GET", "/notes/v1/notes?pageToken=page-N", [], ""), ("POST", "/notes/v1/seed?count=N", [], ""),
        ("GET", "/notes/v1/flaky/kN?failures=N", [], ""), ("GET", "/notes/v1/flaky/sN?status=N", [], ""),
        ("GET", "/notes/v1/slow?ms=N", [], ""),
        ("GET", "/echo", ["X-Courier-Fault: Nx1"], ""), ("GET", "/echo", ["X-Courier-Fault: 503xN"], ""),
        ("GET", "/echo", ["X-Courier-Fault: slow-N"], ""), ("GET", "/echo", ["X-Courier-Fault: quota-N"], ""),
        ("POST", "/upload/files/v1/files?uploadType=resumable&name=pN&partial=N", [], ""),
        ("POST", "/upload/files/v1/files?uploadType=resumable&name=fN&fail=1:N", [], ""),
        ("POST", "/upload/files/v1/files?uploadType=resumable&name=iN&fail=N:503", [], ""),
        ("POST", "/upload/files/v1/files?uploadType=resumable&name=eN&expire=N", [], ""),
        ("POST", "/upload/files/v1/files?uploadType=resumable&name=dN&drop=N", [], ""),
        ("POST", "/upload/files/v1/files?uploadType=resumable&name=cN&corrupt=N", [], ""),
        ("POST", "/upload/files/v1/files?uploadType=resumable&name=tN", ["X-Upload-Content-Length: N"], ""),
        ("POST", "/upload/files/v1/files?uploadType=media&name=mN&corrupt=N", [], "hello"),
        ("PUT", "SESSION", ["Content-Range: bytes N-4/5"], "hello"), ("PUT", "SESSION", ["Content-Range: bytes 0-4/N"], "hello"),
        ("PUT", "SESSION", ["Content-Range: bytes */N"], ""),
        ("GET", "/download/files/v1/files/file-1", ["Range: bytes=N-2"], ""),
        ("GET", "/download/files/v1/files/file-1", ["Range: bytes=0-N"], ""),
        ("GET", "/download/files/v1/files/file-1", ["Range: bytes=N-"], ""),
        ("GET", "/download/files/v1/files/file-1?break=N&corrupt=N", [], ""),
        ("POST", "/batch/notes/v1", ["Content-Type: multipart/mixed; boundary=b"],
         "--b\r\nContent-Type: application/http\r\n\r\nGET /notes/v1/notes?maxResults=N HTTP/1.1\r\nContent-Length: N\r\n\r\n\r\n--b--\r\n"),
    ]

    /// The templates that ask the server to wait N milliseconds before it answers.
    static func waits(_ request: String) -> Bool {
        ["/delay/", "/notes/v1/slow?", "X-Courier-Fault: slow-"].contains { request.contains($0) }
    }

    @Test func everyNumberTheServerReadsLeavesItRunning() async throws {
        let port = unusedPort()
        let courier = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("courier")
        try await withChildProcess(courier.path, ["serve", "--port", "\(port)"]) { pid in
            #expect(await waitForListener(port: port, while: pid), "courier serve did not start")
            // The first file (`file-1`) and a resumable session for the templates to aim at.
            let stored = try await Self.exchange(port: port, Self.wire("POST", "/upload/files/v1/files?uploadType=media&name=f",
                                                                      body: "hello world"))
            #expect(Self.status(stored) == 200)
            let begun = try #require(try await Self.exchange(port: port, Self.wire("POST", "/upload/files/v1/files?uploadType=resumable&name=s")))
            let location = try #require(begun.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("location:") })
            let session = try #require(URL(string: location.dropFirst("location:".count).trimmingCharacters(in: .whitespaces)))
            let sessionTarget = session.path + "?" + (session.query ?? "")

            let requests = Self.templates.flatMap { template in
                Self.hostile.map { value in
                    Self.wire(template.method, template.target == "SESSION" ? sessionTarget : template.target.replacingOccurrences(of: "N", with: value),
                              headers: template.headers.map { $0.replacingOccurrences(of: "N", with: value) },
                              body: template.body.replacingOccurrences(of: "=N ", with: "=\(value) ")
                                  .replacingOccurrences(of: "Length: N", with: "Length: \(value)"))
                }
            }
            var unanswered: [String] = []
            for batch in stride(from: 0, to: requests.count, by: 16).map({ requests[$0..<min($0 + 16, requests.count)] }) {
                // A wait asked for (`/delay/9223372036854775807`) is the client's to end, after a second.
                let heads = await withTaskGroup(of: (String, String?).self) { group in
                    for request in batch {
                        group.addTask { (request, try? await Self.exchange(port: port, request, seconds: Self.waits(request) ? 1 : 30)) }
                    }
                    return await group.reduce(into: [(String, String?)]()) { $0.append($1) }
                }
                unanswered += heads.filter { !Self.waits($0.0) && Self.status($0.1) == nil }.map(\.0)
                guard Self.status(try? await Self.exchange(port: port, Self.wire("GET", "/echo"))) == 200 else {
                    Issue.record("courier serve stopped on one of: \(batch.map { $0.split(separator: "\r\n").prefix(3).joined(separator: " | ") })")
                    return
                }
            }
            // The server lived, and answered every request that did not ask it to wait.
            #expect(unanswered.isEmpty, "\(unanswered.count) of \(requests.count) unanswered: \(unanswered.prefix(5))")
            #expect(Self.status(try await Self.exchange(port: port, Self.wire("GET", "/echo"))) == 200)
        }
    }
}
