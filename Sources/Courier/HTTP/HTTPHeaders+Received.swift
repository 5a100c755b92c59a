/// A response's header lines as they arrived, parsed only when someone reads them.
///
/// The transport's header callback copies each line once and looks at its first bytes, nothing
/// more; names and values are found (and become strings) when a field is read: a lookup by name
/// scans the lines and makes one string, the value; iterating makes them all. Most responses'
/// headers are never read, so parsing each line as it arrived, as an earlier version did, cost
/// about 3,900 instructions of a small response for nothing (callgrind, Docs/Performance.md).
/// Immutable, so a response shares it freely across tasks.
final class ReceivedHeaderBlock: Sendable {
    /// Where a field's name and value lie in ``bytes``, trimmed.
    struct Span: Sendable {
        var nameStart: Int
        var nameEnd: Int
        var valueStart: Int
        var valueEnd: Int
    }

    /// The lines, each ending with `\n`; none is a status line, a blank line or a folded one.
    let bytes: [UInt8]

    init(lines bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Calls `body` with each field in order (lines without a colon are not fields); stops when it returns false.
    func forEachField(_ body: (Span) -> Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            var lineStart = 0
            while lineStart < buffer.count {
                var lineEnd = lineStart
                var colon = -1
                while buffer[lineEnd] != UInt8(ascii: "\n") {
                    if colon < 0, buffer[lineEnd] == UInt8(ascii: ":") { colon = lineEnd }
                    lineEnd += 1
                }
                defer { lineStart = lineEnd + 1 }
                guard colon >= 0 else { continue }
                let name = Self.trimmed(buffer, lineStart, colon)
                let value = Self.trimmed(buffer, colon + 1, lineEnd)
                if !body(Span(nameStart: name.start, nameEnd: name.end, valueStart: value.start, valueEnd: value.end)) { return }
            }
        }
    }

    var fields: [HTTPHeaders.Field] {
        var fields: [HTTPHeaders.Field] = []
        forEachField { span in
            fields.append(HTTPHeaders.Field(name: string(span.nameStart, span.nameEnd), value: value(of: span)))
            return true
        }
        return fields
    }

    var count: Int {
        var count = 0
        forEachField { _ in
            count += 1
            return true
        }
        return count
    }

    func value(of span: Span) -> String { string(span.valueStart, span.valueEnd) }

    /// The values of the fields named `name`, ASCII case-insensitively, in order; at most `limit`.
    func values(named name: String, limit: Int = .max) -> [String] {
        var name = name
        var values: [String] = []
        name.withUTF8 { wanted in
            forEachField { span in
                if nameEquals(span, wanted) { values.append(value(of: span)) }
                return values.count < limit
            }
        }
        return values
    }

    private func nameEquals(_ span: Span, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        guard span.nameEnd - span.nameStart == wanted.count else { return false }
        for offset in 0..<wanted.count where HTTPSyntax.lower(bytes[span.nameStart + offset]) != HTTPSyntax.lower(wanted[offset]) {
            return false
        }
        return true
    }

    private func string(_ start: Int, _ end: Int) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
    }

    /// `start..<end` without leading and trailing spaces and tabs.
    private static func trimmed(_ buffer: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> (start: Int, end: Int) {
        var start = start
        var end = end
        while start < end, HTTPSyntax.isBlank(buffer[start]) { start += 1 }
        while end > start, HTTPSyntax.isBlank(buffer[end - 1]) { end -= 1 }
        return (start, end)
    }
}

/// Collects the header lines of the last response, as curl's header callback hands them over:
/// status lines, fields, the blank line that ends a head, and trailers.
struct ReceivedHeaderCollector {
    /// The last response's field lines, each ending with `\n` (see ``ReceivedHeaderBlock``).
    private var lines: [UInt8] = []
    /// Obsolete line folding met: the fields are kept as strings from then on.
    private var folded: HTTPHeaders?
    /// The blank line that ends the head arrived: later lines are trailers, not kept.
    private(set) var headEnded = false

    /// Takes one line as curl delivered it, line break included. Returns true when it began a
    /// new response (a status line: the first, or one after a redirect, a `100 Continue` or a
    /// proxy's CONNECT), whose fields replace those collected so far.
    mutating func receive(_ line: UnsafeRawBufferPointer) -> Bool {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { // the blank line that ends a head: later lines are trailers
            headEnded = true
            return false
        }
        if end >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
           line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/") {
            lines.removeAll(keepingCapacity: true)
            folded = nil
            headEnded = false
            return true
        }
        guard !headEnded else { return false }
        let content = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if HTTPSyntax.isBlank(line[0]) { // a continuation of the last field (obsolete folding)
            if folded == nil { folded = headers }
            var start = 0
            while start < content.count, HTTPSyntax.isBlank(content[start]) { start += 1 }
            folded!.appendToLastValue(String(decoding: content[start...], as: UTF8.self))
        } else if folded != nil {
            for field in ReceivedHeaderBlock(lines: Array(content) + [UInt8(ascii: "\n")]).fields {
                folded!.add(name: field.name, value: field.value)
            }
        } else {
            if lines.isEmpty { lines.reserveCapacity(512) }
            lines.append(contentsOf: content)
            lines.append(UInt8(ascii: "\n"))
        }
        return false
    }

    var headers: HTTPHeaders {
        if let folded { return folded }
        return lines.isEmpty ? HTTPHeaders() : HTTPHeaders(received: ReceivedHeaderBlock(lines: lines))
    }
}
