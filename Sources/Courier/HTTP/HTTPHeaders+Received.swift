/// A response's header lines as they arrived, parsed only when someone reads them.
///
/// The transport's header callback copies each line once and looks at its first bytes, nothing
/// more; names and values are found (and become strings) when a field is read: a lookup by name
/// scans the lines and makes one string, the value; iterating makes them all. Most responses'
/// headers are never read, so parsing each line as it arrived, as an earlier version did, cost
/// about 3,900 instructions of a small response for nothing (callgrind, Docs/Performance.md).
///
/// The collector copies each line straight into one buffer (``ReceivedHeaderBytes``): a `memcpy`
/// per line instead of a generic append (P12 in Docs/Performance.md), into a buffer that goes
/// back to the loop for the next response (P14). Immutable once shared, so a response shares it
/// freely across tasks.
struct ReceivedHeaderBlock: @unchecked Sendable { // the storage is a class with a raw pointer; immutable once shared
    /// Where a field's name and value lie in ``bytes``, trimmed.
    struct Span: Sendable {
        var nameStart: Int
        var nameEnd: Int
        var valueStart: Int
        var valueEnd: Int
    }

    let storage: ReceivedHeaderBytes

    /// Calls `body` with the lines, each ending with `\n`; none is a status line, a blank line
    /// or a folded one.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        body(UnsafeBufferPointer(start: storage.bytes, count: storage.byteCount))
    }

    /// Calls `body` with each field in order (lines without a colon are not fields); stops when it returns false.
    func forEachField(_ body: (Span) -> Bool) {
        withBytes { buffer in
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
        return withBytes { bytes in
            for offset in 0..<wanted.count where HTTPSyntax.lower(bytes[span.nameStart + offset]) != HTTPSyntax.lower(wanted[offset]) {
                return false
            }
            return true
        }
    }

    private func string(_ start: Int, _ end: Int) -> String {
        withBytes { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
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

/// The bytes of a ``ReceivedHeaderBlock``. Written only by ``ReceivedHeaderCollector`` while it
/// holds the sole reference (it copies first otherwise).
///
/// The bytes are a buffer of ``RecycledBuffers/headers``, given back when the block goes: the
/// loop thread fills the block and the caller's thread releases it (P14 in Docs/Performance.md).
/// An earlier form kept them in the object's own allocation (a `ManagedBuffer`), which the
/// caller's thread freed into the loop thread's malloc arena.
final class ReceivedHeaderBytes {
    let bytes: UnsafeMutablePointer<UInt8>
    /// How many bytes are written, and how many fit. Unchecked: a class's `var` is otherwise
    /// checked for exclusive access at run time on every read; one writer, before the block is
    /// shared (see above).
    @exclusivity(unchecked) private(set) var byteCount = 0
    let capacity: Int

    /// An empty block with room for `capacity` bytes.
    init(capacity: Int) {
        let buffer = RecycledBuffers.headers.take(atLeast: capacity)
        self.bytes = buffer.assumingMemoryBound(to: UInt8.self)
        self.capacity = RecycledBuffers.capacity(of: buffer)
    }

    deinit { RecycledBuffers.headers.give(bytes) }

    /// A block holding one field line (given without its line break).
    static func make(line: UnsafeRawBufferPointer) -> ReceivedHeaderBytes {
        let block = ReceivedHeaderBytes(capacity: line.count + 1)
        block.append(line, newline: true)
        return block
    }

    var freeCapacity: Int { capacity - byteCount }

    /// Appends `content`; the caller has made sure it fits and that it holds the only reference.
    func append(_ content: UnsafeRawBufferPointer, newline: Bool = false) {
        var end = byteCount
        if let base = content.baseAddress { (bytes + end).initialize(from: base.assumingMemoryBound(to: UInt8.self), count: content.count) }
        end += content.count
        if newline {
            bytes[end] = UInt8(ascii: "\n")
            end += 1
        }
        byteCount = end
    }

    /// Forgets the bytes, keeping the room (sole reference only).
    func removeAll() { byteCount = 0 }

    /// A copy of this block's bytes with room for `capacity` bytes in all.
    func copy(capacity: Int) -> ReceivedHeaderBytes {
        let copy = ReceivedHeaderBytes(capacity: capacity)
        copy.append(UnsafeRawBufferPointer(start: bytes, count: byteCount))
        return copy
    }
}

/// Collects the header lines of the last response, as curl's header callback hands them over:
/// status lines, fields, the blank line that ends a head, and trailers.
struct ReceivedHeaderCollector {
    /// The last response's field lines, each ending with `\n` (see ``ReceivedHeaderBlock``);
    /// shared with the `HTTPHeaders` that ``headers`` returned, so copied before a change then.
    private var block: ReceivedHeaderBytes?
    /// Room for a typical response's fields, so most never grow.
    static let initialCapacity = 512
    /// Obsolete line folding met: the fields are kept as strings from then on.
    private var folded: HTTPHeaders?
    /// The blank line that ends the head arrived: later lines are trailers, not kept.
    private(set) var headEnded = false

    /// Takes one line as curl delivered it, line break included. Returns true when it began a
    /// new response (a status line: the first, or one after a redirect, a `100 Continue` or a
    /// proxy's CONNECT), whose fields replace those collected so far.
    mutating func receive(_ line: UnsafeRawBufferPointer) -> Bool {
        // Through the base pointer: every line of every response passes here (P12).
        guard let bytes = line.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        var end = line.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { // the blank line that ends a head: later lines are trailers
            headEnded = true
            return false
        }
        if end >= 5, bytes[0] == UInt8(ascii: "H"), bytes[1] == UInt8(ascii: "T"), bytes[2] == UInt8(ascii: "T"),
           bytes[3] == UInt8(ascii: "P"), bytes[4] == UInt8(ascii: "/") {
            if block != nil {
                if isKnownUniquelyReferenced(&block!) { block!.removeAll() } else { block = nil }
            }
            folded = nil
            headEnded = false
            return true
        }
        guard !headEnded else { return false }
        let content = UnsafeRawBufferPointer(start: bytes, count: end)
        if HTTPSyntax.isBlank(bytes[0]) { // a continuation of the last field (obsolete folding)
            if folded == nil { folded = headers }
            var start = 0
            while start < end, HTTPSyntax.isBlank(bytes[start]) { start += 1 }
            folded!.appendToLastValue(String(decoding: content[start...], as: UTF8.self))
        } else if folded != nil {
            for field in ReceivedHeaderBlock(storage: .make(line: content)).fields {
                folded!.add(name: field.name, value: field.value)
            }
        } else {
            append(content)
        }
        return false
    }

    /// Copies one field line into the block, with `\n` after it.
    private mutating func append(_ content: UnsafeRawBufferPointer) {
        let needed = content.count + 1
        if block == nil {
            block = ReceivedHeaderBytes(capacity: Swift.max(needed, Self.initialCapacity))
        } else if !isKnownUniquelyReferenced(&block!) || block!.freeCapacity < needed {
            // No binding of `block` before the check: a second reference would always fail it.
            block = block!.copy(capacity: Swift.max(block!.byteCount + needed, 2 * block!.byteCount))
        }
        block!.append(content, newline: true)
    }

    var headers: HTTPHeaders {
        if let folded { return folded }
        guard let block, block.byteCount > 0 else { return HTTPHeaders() }
        return HTTPHeaders(received: ReceivedHeaderBlock(storage: block))
    }
}
