import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// `X-Courier-Fault: drop-kept-alive;run=<id>` on the main listener, for any route: the first
/// request of a connection is answered by the routes; each later one on that connection is read
/// as far as its head and the connection is closed without an answer. That is the race of a
/// server closing an idle kept-alive connection as a request arrives, in which libcurl sends the
/// request again on a fresh connection by itself (whose first request is answered).
///
/// Every request carrying the header is counted in ``FaultCounts`` under its value; the dropped
/// ones also under `dropped:` and the value, so a test can tell each drop from an answer. A
/// channel handler, not a middleware: only the connection knows which of its requests came first.
final class KeptAliveDropHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    static let name = "drop-kept-alive"
    private static let header = HTTPField.Name("X-Courier-Fault")!

    private let faults: FaultCounts
    private var requests = 0
    private var dropping = false

    init(faults: FaultCounts) {
        self.faults = faults
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !dropping else { return } // the rest of the dropped request goes nowhere
        if case .head(let head) = unwrapInboundIn(data) {
            requests += 1
            if let value = head.headerFields[Self.header], value.hasPrefix(Self.name) {
                let target = head.path ?? "/"
                faults.count(value, target: target)
                if requests > 1 {
                    faults.count("dropped:" + value, target: target)
                    dropping = true
                    context.close(promise: nil)
                    return
                }
            }
        }
        context.fireChannelRead(data)
    }
}
