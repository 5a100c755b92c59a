import CourierSync
import Foundation
import NIOCore
import NIOPosix

/// A raw TCP listener that answers each request with a wire-level fault, chosen by the
/// `X-Courier-Fault` header (the name below, without its slash) or else by path:
///
/// - `/reset-mid-body`: promises 100,000 bytes, sends 1,000, then resets the connection (RST).
/// - `/reset-before-headers`: resets the connection as soon as the request arrives.
/// - `/stall-headers`: sends the status line only, then nothing.
/// - `/close-after-response`: a complete keep-alive response, then closes the connection anyway.
/// - `/truncated`: promises 1,000 bytes, sends 500, then closes cleanly (FIN).
/// - `/bad-chunked`: invalid chunked transfer encoding.
/// - `/huge-header`: a header block of 300 KiB.
/// - `/not-http`: bytes that are not HTTP.
/// - `/folded-first-header`: a 200 whose first header line is folded (starts with a space), so
///   it continues a header that does not exist (RFC 9112 §5.2 deprecates folding altogether).
/// - Coded bodies of ``TestServer/codedText``, each with complete HTTP framing: `/gzip-whole`;
///   `/gzip-cut` (the gzip stream stops halfway, and Content-Length says so); `/gzip-cut-chunked` (the same, chunked); `/gzip-members` (the text's two halves as two
///   gzip members); `/gzip-padded` (zero bytes after the member); `/gzip-corrupt` (a byte
///   flipped midway); `/deflate-zlib` and `/deflate-raw` (HTTP's `deflate`, with zlib's wrapper
///   and without); `/brotli` (`Content-Encoding: br`, which Courier does not offer); `/zstd-whole`
///   and `/zstd-cut` (a zstd frame, whole and stopping halfway: ``Zstd``).
/// - `/keepalive-then-drop`: answers the first request of a connection completely, keeping it
///   alive; reads the next request on that connection and closes it without an answer — the
///   race in which libcurl silently re-sends a request the server has already received.
///
/// Every request that names a fault in `X-Courier-Fault` is counted by the header's whole value
/// (``FaultCounts``), so a test can tell how often a request reached the server.
/// - `/upload-drop/…?upload_id=…`: a resumable-upload session URI of ``FilesAPI`` whose first
///   chunk is cut after the session's `drop` byte count by a reset; later requests are answered
///   by the Files API.
final class RawFaultServer: Sendable {
    let port: Int
    private let channel: any Channel

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
    }

    static func start(host: String = "127.0.0.1", counters: TestServerCounters, files: FilesAPI,
                      faults: FaultCounts) async throws -> RawFaultServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                counters.connectionOpened()
                channel.closeFuture.whenComplete { _ in counters.connectionClosed() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FaultHandler(files: files, faults: faults))
                }
            }
            .bind(host: host, port: 0)
            .get()
        return RawFaultServer(port: channel.localAddress?.port ?? 0, channel: channel)
    }

    func stop() async {
        try? await channel.close()
    }
}

private final class FaultHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let files: FilesAPI
    private let faults: FaultCounts
    private var received = ByteBuffer()
    private var answered = false
    private var answeredOnConnection = 0

    init(files: FilesAPI, faults: FaultCounts) {
        self.files = files
        self.faults = faults
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        guard !answered else { return }
        // The head's end is found in the bytes, not in a decoded string: a byte that is not UTF-8
        // decodes to three, and the body would start at the wrong place.
        let view = received.readableBytesView
        guard let headEnd = view.firstRange(of: Self.headEnd) else {
            if received.readableBytes > Self.largestHead { refuse("the request's head is over 64 KiB", context) }
            return
        }
        let headLength = view.distance(from: view.startIndex, to: headEnd.upperBound)
        let head = String(decoding: view[view.startIndex..<headEnd.lowerBound], as: UTF8.self)
        let target = head.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
        let path = target.split(separator: "?").first.map(String.init) ?? target
        if path.hasPrefix("/upload-drop/") {
            uploadDrop(head: head, bodyStart: headLength, target: target, context: context)
            return
        }
        // `X-Courier-Fault: <name>` picks the fault for any path, so every operation can meet it.
        let headerValue = head.components(separatedBy: "\r\n").dropFirst().first {
            $0.lowercased().hasPrefix("x-courier-fault:")
        }.map { $0.dropFirst("x-courier-fault:".count).trimmingCharacters(in: .whitespaces) }
        let fault = headerValue.map { "/" + ($0.split(separator: ";").first.map(String.init) ?? "") }
        if fault == "/keepalive-then-drop" {
            // Wait for the whole request (its body too) before answering, so the next one starts clean.
            let declared = head.components(separatedBy: "\r\n").first {
                $0.lowercased().hasPrefix("content-length:")
            }.map { $0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces) }
            guard let length = bodyLength(declared, context) else { return }
            guard received.readableBytes >= headLength + length else { return }
            received.moveReaderIndex(forwardBy: headLength + length)
            received.discardReadBytes()
            if let headerValue { faults.count(headerValue, target: target) }
            answeredOnConnection += 1
            if answeredOnConnection == 1 {
                write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok", context)
            } else {
                answered = true
                context.close(promise: nil)
            }
            return
        }
        answered = true
        if let headerValue { faults.count(headerValue, target: target) }
        respond(to: fault ?? path, context: context)
    }

    /// A request on a drop-fault session URI: cut the first chunk, answer the rest.
    private func uploadDrop(head: String, bodyStart: Int, target: String, context: ChannelHandlerContext) {
        let lines = head.components(separatedBy: "\r\n")
        let headers = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        guard let length = bodyLength(header("Content-Length"), context) else { return }
        let query = target.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        let uploadID = APIRequest(method: "PUT", rawPath: "", query: query, headers: [], body: Data()).parameter("upload_id") ?? ""
        let bodyBytes = received.readableBytes - bodyStart
        let isChunk = FilesAPI.contentRange(header("Content-Range"))?.first != nil
        if isChunk, let dropAfter = files.shouldDrop(uploadID: uploadID) {
            guard bodyBytes >= min(Int(dropAfter), length) else { return }
            let body = received.getBytes(at: received.readerIndex + bodyStart, length: min(Int(dropAfter), length)) ?? []
            files.partialChunk(uploadID: uploadID, contentRange: header("Content-Range"), bytes: Data(body))
            answered = true
            Self.reset(context)
            return
        }
        guard bodyBytes >= length else { return }
        let body = received.getBytes(at: received.readerIndex + bodyStart, length: length) ?? []
        received.moveReaderIndex(forwardBy: bodyStart + length)
        received.discardReadBytes()
        let response = files.chunk(APIRequest(method: String(lines.first?.split(separator: " ").first ?? "PUT"), rawPath: target,
                                              query: query, headers: headers, body: Data(body)))
        var text = "HTTP/1.1 \(response.status) \(response.status == 308 ? "Resume Incomplete" : "OK")\r\n"
        var hasLength = false
        for (name, value) in response.headers {
            if name.lowercased() == "content-length" { hasLength = true }
            text += "\(name): \(value)\r\n"
        }
        if !hasLength { text += "Content-Length: \(response.body.count)\r\n" }
        text += "\r\n"
        var buffer = ByteBuffer(string: text)
        buffer.writeBytes(response.body)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    private static let headEnd = Array("\r\n\r\n".utf8)
    /// What the handler keeps of a request before its head ends, and of a body it waits for.
    private static let largestHead = 64 << 10
    private static let largestBody = 64 << 20

    /// A request's `Content-Length` (none is 0); nil after refusing one that is not a length the
    /// handler will wait for and keep.
    private func bodyLength(_ declared: String?, _ context: ChannelHandlerContext) -> Int? {
        do {
            return try ClientNumber.parse(declared, "Content-Length", in: 0...Self.largestBody) ?? 0
        } catch {
            refuse(error.message, context)
            return nil
        }
    }

    /// A 400 for a request the handler cannot take, then the connection closes.
    private func refuse(_ reason: String, _ context: ChannelHandlerContext) {
        answered = true
        write("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: \(reason.utf8.count)\r\nConnection: close\r\n\r\n"
              + reason, context, close: true)
    }

    private func respond(to path: String, context: ChannelHandlerContext) {
        switch path {
        case "/reset-mid-body":
            write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 1000), context)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(20)) { Self.reset(loopBound.value) }
        case "/reset-before-headers":
            Self.reset(context)
        case "/stall-headers":
            write("HTTP/1.1 200 OK\r\n", context)
        case "/close-after-response":
            write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok", context, close: true)
        case "/truncated":
            write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "t", count: 500), context, close: true)
        case "/bad-chunked":
            write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n", context, close: true)
        case "/huge-header":
            write("HTTP/1.1 200 OK\r\nX-Huge: " + String(repeating: "h", count: 300 << 10) + "\r\nContent-Length: 0\r\n\r\n",
                  context, close: true)
        case "/folded-first-header":
            write("HTTP/1.1 200 OK\r\n X-Folded: continues nothing\r\nContent-Length: 2\r\n\r\nok", context, close: true)
        case "/not-http":
            write("SSH-2.0-OpenSSH_9.0 definitely not http\r\n\r\n", context, close: true)
        case let path where path.hasPrefix("/gzip-") || path.hasPrefix("/deflate-") || path.hasPrefix("/zstd-") || path == "/brotli":
            writeCoded(path, context)
        default:
            write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", context, close: true)
        }
    }

    /// One of the coded bodies (see the type's list).
    private func writeCoded(_ path: String, _ context: ChannelHandlerContext) {
        let text = TestServer.codedText
        let gzip = Gzip.compress(text)
        var coding = "gzip"
        var body: Data
        switch path {
        case "/gzip-whole": body = gzip
        case "/gzip-cut", "/gzip-cut-chunked": body = gzip.prefix(gzip.count / 2)
        case "/gzip-members": body = Gzip.compress(text.prefix(text.count / 2)) + Gzip.compress(text.dropFirst(text.count / 2))
        case "/gzip-padded": body = gzip + Data(count: 8)
        case "/gzip-corrupt":
            body = gzip
            body[body.startIndex + body.count / 2] ^= 0xFF
        case "/deflate-zlib": (coding, body) = ("deflate", Gzip.compress(text, windowBits: 15))
        case "/deflate-raw": (coding, body) = ("deflate", Gzip.compress(text, windowBits: -15))
        case "/zstd-whole", "/zstd-cut":
            let frame = Zstd.rawFrame(text)
            (coding, body) = ("zstd", path == "/zstd-cut" ? frame.prefix(frame.count / 2) : frame)
        default: (coding, body) = ("br", Data("not brotli".utf8))
        }
        var buffer = ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Encoding: \(coding)\r\nConnection: close\r\n")
        if path.hasSuffix("-chunked") {
            buffer.writeString("Transfer-Encoding: chunked\r\n\r\n\(String(body.count, radix: 16))\r\n")
            buffer.writeBytes(body)
            buffer.writeString("\r\n0\r\n\r\n")
        } else {
            buffer.writeString("Content-Length: \(body.count)\r\n\r\n")
            buffer.writeBytes(body)
        }
        // Closed after the whole response (the handler answers one request a connection): the
        // framing is complete either way.
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    private func write(_ text: String, _ context: ChannelHandlerContext, close: Bool = false) {
        let future = context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)))
        if close {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            future.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }

    /// SO_LINGER with a zero timeout makes close() send RST instead of FIN.
    private static func reset(_ context: ChannelHandlerContext) {
        guard let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in
            loopBound.value.close(promise: nil)
        }
    }
}

/// The requests carrying each `X-Courier-Fault` value that reached the raw fault server.
public final class FaultCounts: Sendable {
    private let seen = LockedValue<[String: [String]]>([:])

    func count(_ headerValue: String, target: String) {
        seen.withLock { $0[headerValue, default: []].append(target) }
    }

    /// Requests seen with exactly this header value (`reset-before-headers;run=…`).
    public func requests(_ headerValue: String) -> Int {
        seen.withLock { $0[headerValue]?.count ?? 0 }
    }

    /// Their request targets (path and query), in the order they came.
    public func targets(_ headerValue: String) -> [String] {
        seen.withLock { $0[headerValue] ?? [] }
    }
}
