import Foundation
import NIOCore
import NIOPosix

/// A raw TCP listener that answers each request with a wire-level fault, by path:
///
/// - `/reset-mid-body`: promises 100,000 bytes, sends 1,000, then resets the connection (RST).
/// - `/reset-before-headers`: resets the connection as soon as the request arrives.
/// - `/stall-headers`: sends the status line only, then nothing.
/// - `/close-after-response`: a complete keep-alive response, then closes the connection anyway.
/// - `/truncated`: promises 1,000 bytes, sends 500, then closes cleanly (FIN).
/// - `/bad-chunked`: invalid chunked transfer encoding.
/// - `/huge-header`: a header block of 300 KiB.
/// - `/not-http`: bytes that are not HTTP.
final class RawFaultServer: Sendable {
    let port: Int
    private let channel: any Channel

    private init(port: Int, channel: any Channel) {
        self.port = port
        self.channel = channel
    }

    static func start(counters: TestServerCounters) async throws -> RawFaultServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                counters.connectionOpened()
                channel.closeFuture.whenComplete { _ in counters.connectionClosed() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FaultHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
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

    private var received = ByteBuffer()
    private var answered = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        guard !answered, let text = received.getString(at: received.readerIndex, length: received.readableBytes),
              text.contains("\r\n\r\n")
        else { return }
        answered = true
        let path = text.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
        respond(to: path.split(separator: "?").first.map(String.init) ?? path, context: context)
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
        case "/not-http":
            write("SSH-2.0-OpenSSH_9.0 definitely not http\r\n\r\n", context, close: true)
        default:
            write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", context, close: true)
        }
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
