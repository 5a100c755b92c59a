import Foundation

/// The protocol version a response arrived with.
public enum HTTPVersion: Sendable, Hashable {
    case http1_0, http1_1, http2, http3
}

/// The status line and headers of a response.
public struct HTTPResponseHead: Sendable, Hashable {
    public var status: Int
    public var headers: HTTPHeaders
    public var version: HTTPVersion
    /// The URL that answered, after any redirects.
    public var url: URL

    public init(status: Int, headers: HTTPHeaders = [:], version: HTTPVersion = .http1_1, url: URL) {
        self.status = status
        self.headers = headers
        self.version = version
        self.url = url
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}

extension HTTPResponseHead: CustomStringConvertible {
    /// The status and the URL that answered, with credentials in the query replaced by `_snip_`
    /// (an API key, a signed URL's signature, an upload session's ID). The headers print on
    /// their own (``HTTPHeaders``), redacted the same way.
    public var description: String { "\(status) from \(Redaction.url(url.absoluteString))" }
}

/// A response with its body buffered in memory, as ``ServiceActor/send(_:options:)`` returns it.
public struct HTTPResponse: Sendable {
    public var head: HTTPResponseHead
    public var body: Data

    public init(head: HTTPResponseHead, body: Data = Data()) {
        self.head = head
        self.body = body
    }

    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL) {
        self.init(head: HTTPResponseHead(status: status, headers: headers, url: url), body: body)
    }

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
    public var url: URL { head.url }
    public var isSuccess: Bool { head.isSuccess }
}

extension HTTPResponse: CustomStringConvertible {
    /// The head (``HTTPResponseHead/description``) and the body's size, not its bytes.
    public var description: String { "\(head), \(body.count) bytes" }
}
