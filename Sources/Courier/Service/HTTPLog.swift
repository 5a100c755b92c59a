import CourierSync
import Foundation
import Synchronization

/// Where and how to write HTTP traffic logs.
public struct HTTPLogOptions: Sendable {
    /// One file per exchange goes here, with an `index.html` listing them.
    public var directory: URL
    /// Longest body written per message; the rest is cut.
    public var maxBodyBytes: Int

    public init(directory: URL, maxBodyBytes: Int = 1 << 20) {
        self.directory = directory
        self.maxBodyBytes = maxBodyBytes
    }
}

/// Writes each query's request and response to a file, with every credential replaced by
/// `_snip_`: Authorization and API-key headers, secret URL parameters, and token-like JSON and
/// form fields. GTMSessionFetcherLogging, for Linux.
final class HTTPTrafficLog: Sendable {
    let options: HTTPLogOptions
    private let counter = LockedValue(0)
    private let queue = DispatchQueue(label: "courier.http-log")

    /// Stands in for a body that is a credential (a token endpoint's answer).
    static func withheld(_ body: Data) -> Data {
        Data("<\(body.count) bytes of credentials, not logged>".utf8)
    }

    init(options: HTTPLogOptions) {
        self.options = options
        try? FileManager.default.createDirectory(at: options.directory, withIntermediateDirectories: true)
    }

    /// Records one exchange; `head` nil with `error` for a failure below HTTP, `body` nil for a
    /// body that is streamed or went to a file. `resends` counts libcurl's own re-sends of the
    /// request on a fresh connection within this exchange: the server may have seen it that many
    /// times more, and the log says so (Docs/Pipeline.md, "libcurl's own re-send").
    func record(name: String, requestID: String, request: HTTPRequest, head: HTTPResponseHead?, body: Data?,
                error: (any Error)?, resends: Int, duration: Duration) {
        let number = counter.withLock { value -> Int in
            value += 1
            return value
        }
        let fileName = String(format: "%04d-%@-%@.txt", number, request.method.rawValue,
                              name.replacingOccurrences(of: "/", with: "_"))
        let text = render(name: name, requestID: requestID, request: request, head: head, body: body, error: error,
                          resends: resends, duration: duration)
        let directory = options.directory
        let sent = resends > 0 ? " (sent \(resends + 1) times)" : ""
        let indexLine = "<li><a href=\"\(fileName)\">\(fileName)</a> \(head.map { "\($0.status)" } ?? "failed")\(sent)</li>\n"
        queue.async {
            try? Data(text.utf8).write(to: directory.appendingPathComponent(fileName))
            let index = directory.appendingPathComponent("index.html")
            if let handle = try? FileHandle(forWritingTo: index) {
                // The throwing calls: a full disk loses a log line, never the caller's process.
                _ = try? handle.seekToEnd()
                try? handle.write(contentsOf: Data(indexLine.utf8))
                try? handle.close()
            } else {
                try? Data(("<html><body><h1>Courier HTTP log</h1><ul>\n" + indexLine).utf8).write(to: index)
            }
        }
    }

    /// Waits until every queued write is on disk.
    func flush() {
        queue.sync {}
    }

    private func render(name: String, requestID: String, request: HTTPRequest, head: HTTPResponseHead?, body: Data?,
                        error: (any Error)?, resends: Int, duration: Duration) -> String {
        var lines = ["# \(name)  [\(requestID)]  \(duration)", "", "\(request.method) \(Redaction.url(request.url.absoluteString))"]
        lines += request.headers.map { "\($0.name): \(Redaction.headerValue(name: $0.name, value: $0.value))" }
        if case .data(let body) = request.body.storage {
            lines += ["", render(body: body, contentType: request.headers["Content-Type"])]
        } else if !request.body.isEmpty {
            lines += ["", "<streamed body>"]
        }
        if resends > 0 {
            lines += ["", "<sent \(resends + 1) times: a kept-alive connection closed before any response, "
                        + "and libcurl sent it again on a fresh one>"]
        }
        lines += ["", "----", ""]
        if let head {
            lines.append("\(head.status)")
            lines += head.headers.map { "\($0.name): \(Redaction.headerValue(name: $0.name, value: $0.value))" }
            if let body {
                lines += ["", render(body: body, contentType: head.headers["Content-Type"])]
            } else {
                lines += ["", "<body streamed or written to a file>"]
            }
        } else if let error {
            lines.append("failed: \(error)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func render(body: Data, contentType: String?) -> String {
        guard !body.isEmpty else { return "" }
        // Only what reads as text is decoded: media (megabytes of binary chunks) is summarized
        // without a parse attempt or a UTF-8 repair pass over it.
        let type = contentType?.lowercased() ?? ""
        let first = body.first { !(" \t\r\n".utf8.contains($0)) }
        let looksLikeJSON = type.contains("json") || (type.isEmpty && (first == UInt8(ascii: "{") || first == UInt8(ascii: "[")))
        let isText = looksLikeJSON || type.hasPrefix("text/") || type.contains("x-www-form-urlencoded")
        guard isText else { return "<\(body.count) bytes of \(contentType ?? "binary data")>" }
        let clipped = body.prefix(options.maxBodyBytes)
        let suffix = body.count > clipped.count ? "\n… \(body.count - clipped.count) more bytes" : ""
        if looksLikeJSON, let json = try? JSONValue(parsing: Data(clipped)) {
            return String(decoding: Redaction.json(json).serialized(pretty: true), as: UTF8.self) + suffix
        }
        let text = String(decoding: clipped, as: UTF8.self)
        if type.contains("x-www-form-urlencoded") { return Redaction.form(text) + suffix }
        return Redaction.text(text) + suffix
    }
}
