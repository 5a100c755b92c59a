import Courier
import Foundation
import FuzzDriver
#if canImport(Glibc)
import Glibc
#endif

// What a server sends, as bytes on the wire: after the first byte (which picks the operation)
// the input is the whole answer, status line and all, that a server on 127.0.0.1 writes to each
// connection before it closes it. So libcurl parses it and Courier collects, reads and decodes
// what libcurl passes on: header lines of any shape, chunked or cut bodies, encodings, ranges,
// hashes. A plain request (with retries), a typed query and a download to a file meet it. Each
// must return or throw a typed error: nothing may trap or hang.

/// A listener on 127.0.0.1 that reads each request's head, writes the current answer and closes.
final class WireServer: @unchecked Sendable { // `answer` is behind the lock; the rest is set once
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var answer: [UInt8] = []

    init() {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        precondition(listening, "the fuzz target's server could not listen") // the harness's own setup, not an input
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in serve() }.start()
    }

    func answer(with bytes: [UInt8]) {
        lock.withLock { answer = bytes }
    }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // The request's head (a GET has no body): its end, or what came within the timeout.
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while head.count < 64 << 10, !head.suffix(4).elementsEqual("\r\n\r\n".utf8) {
                let count = recv(connection, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                head += buffer[..<count]
            }
            let bytes = lock.withLock { answer }
            var sent = 0
            while sent < bytes.count {
                let count = bytes.withUnsafeBytes { send(connection, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { break }
                sent += count
            }
            shutdown(connection, Int32(SHUT_WR))
            close(connection)
        }
    }
}

let server = WireServer()

/// One service for every input; a request ends within two seconds, retries wait a millisecond.
let service: ServiceActor = {
    var configuration = ServiceActor.Configuration()
    configuration.transport.timeouts.total = .seconds(2)
    configuration.retry.maxRetries = 2
    configuration.retry.initialDelay = 0...0.001
    configuration.retry.maxDelay = .milliseconds(1)
    return try! ServiceActor(configuration: configuration)
}()

let base = URL(string: "http://127.0.0.1:\(server.port)/")!
let api = APIDescription(name: "fuzz", version: "v1", rootURL: base, servicePath: "fuzz/v1/")
let downloadFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fuzz-wire-\(getpid())")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let operation = start[0] % 3
    server.answer(with: Array(UnsafeBufferPointer(start: start + 1, count: count - 1)))
    runToCompletion {
        switch operation {
        case 0:
            if let response = try? await service.send(HTTPRequest(url: base.appendingPathComponent("plain"))) {
                // Every way a caller reads the headers: by name, all of them, the description.
                _ = response.headers["Content-Type"]
                _ = response.headers.values(for: "Set-Cookie")
                _ = Array(response.headers)
                _ = response.headers.description
            }
        case 1:
            _ = try? await service.execute(Query<GenericObject>(api: api, name: "fuzz.get", path: "things/{id}", pathParameters: ["id": "1"]))
        default:
            _ = try? await service.downloadFile(HTTPRequest(url: base.appendingPathComponent("download")), to: downloadFile)
            try? FileManager.default.removeItem(at: downloadFile)
        }
        // A streamed response (the download) returns to its caller while the loop still
        // finishes its transfer, which holds the response's header block. libFuzzer checks for
        // leaks when an input returns with more allocated than freed, and LeakSanitizer cannot
        // see a reference Swift keeps in an enum payload (the block's, in `HTTPHeaders`): a block
        // still in use was reported leaked, about once in 2,000 inputs. So each input ends when
        // the service holds nothing of it; Courier's own counters showed no block kept over
        // 30,000 such downloads (Docs/Reliability.md, "Fuzzing").
        while await service.stats.liveTransfers > 0 { try? await Task.sleep(for: .microseconds(200)) }
    }
    return 0
}

@_cdecl("FuzzWire_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    atexit { removeDownload(at: downloadFile.path) } // libFuzzer ends with exit()
    return runFuzzer(argc, argv) { fuzz($0, $1) }
}
