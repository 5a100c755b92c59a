/// A response's header fields as they arrived: their bytes and where each name and value lies.
///
/// Collected by the transport one line at a time with a copy and four offsets, and turned into
/// Swift strings only when someone reads them: a lookup by name makes one string, the value;
/// iterating makes them all. Building every field as two strings as it arrived cost about
/// 9,000 instructions per small response (callgrind, Docs/Performance.md), most of them for
/// headers nobody reads. Immutable once built, so a response shares it freely across tasks.
final class ReceivedHeaderBlock: Sendable {
    struct Span: Sendable {
        var nameStart: UInt32
        var nameEnd: UInt32
        var valueStart: UInt32
        var valueEnd: UInt32
    }

    let bytes: [UInt8]
    let spans: [Span]

    init(bytes: [UInt8], spans: [Span]) {
        self.bytes = bytes
        self.spans = spans
    }

    var fields: [HTTPHeaders.Field] {
        spans.map { HTTPHeaders.Field(name: string(Int($0.nameStart), Int($0.nameEnd)), value: value(of: $0)) }
    }

    func value(of span: Span) -> String { string(Int(span.valueStart), Int(span.valueEnd)) }

    /// The spans whose name equals `name`, ASCII case-insensitively, in order.
    func spans(named name: String) -> [Span] {
        var name = name
        return name.withUTF8 { wanted in
            spans.filter { span in
                let length = Int(span.nameEnd - span.nameStart)
                guard length == wanted.count else { return false }
                for offset in 0..<length where HTTPSyntax.lower(bytes[Int(span.nameStart) + offset])
                    != HTTPSyntax.lower(wanted[offset]) {
                    return false
                }
                return true
            }
        }
    }

    private func string(_ start: Int, _ end: Int) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
    }
}

/// Collects the header lines of the last response (the transport's header callback).
struct ReceivedHeaderCollector {
    private var bytes: [UInt8] = []
    private var spans: [ReceivedHeaderBlock.Span] = []
    /// Obsolete line folding met: the fields are kept as strings from then on.
    private var folded: HTTPHeaders?
    /// The blank line that ends the head arrived: later lines are trailers, not kept.
    private(set) var headEnded = false

    /// Starts over: a new response (after a redirect, a `100 Continue` or a proxy's CONNECT).
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        folded = nil
        headEnded = false
    }

    mutating func endHead() { headEnded = true }

    /// One field; `name` and `value` are already trimmed.
    mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        if folded != nil {
            folded!.add(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
            return
        }
        if spans.isEmpty {
            bytes.reserveCapacity(512)
            spans.reserveCapacity(16)
        }
        let nameStart = UInt32(bytes.count)
        bytes.append(contentsOf: name)
        let valueStart = UInt32(bytes.count)
        bytes.append(contentsOf: value)
        spans.append(.init(nameStart: nameStart, nameEnd: valueStart, valueStart: valueStart, valueEnd: UInt32(bytes.count)))
    }

    /// A continuation line (obsolete folding): appended to the last field's value.
    mutating func continueLastValue(_ continuation: UnsafeRawBufferPointer) {
        if folded == nil { folded = headers }
        folded!.appendToLastValue(String(decoding: continuation, as: UTF8.self))
    }

    var headers: HTTPHeaders {
        if let folded { return folded }
        return spans.isEmpty ? HTTPHeaders() : HTTPHeaders(received: ReceivedHeaderBlock(bytes: bytes, spans: spans))
    }
}
