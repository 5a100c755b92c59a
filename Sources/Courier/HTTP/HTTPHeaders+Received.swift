/// A response's header lines as they arrived, parsed only when someone reads them.
///
/// The transport's header callback copies each line once and looks at its first bytes, nothing
/// more; names and values are found (and become strings) when a field is read: a lookup by name
/// scans the lines and makes one string, the value; iterating makes them all. Most responses'
/// headers are never read, so parsing each line as it arrived, as an earlier version did, cost
/// about 3,900 instructions of a small response for nothing (callgrind, Docs/Performance.md).
///
/// The collector copies each line straight into one raw buffer: a `memcpy` per line (see
/// Docs/Performance.md), with no object until the headers are read (Docs/Performance.md, "Decisions"), into a buffer that goes
/// back to the loop for the next response (Docs/Performance.md, "Decisions"). Immutable once shared, so a response shares it
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

/// The bytes of a ``ReceivedHeaderBlock``, immutable: ``ReceivedHeaderCollector`` writes the
/// lines into a raw buffer and hands that over, whole, when the headers are read.
///
/// The bytes are a buffer of ``RecycledBuffers/headers``, given back when the block goes: the
/// loop thread fills the block and the caller's thread releases it (see Docs/Performance.md).
/// An earlier form kept them in the object's own allocation (a `ManagedBuffer`), which the
/// caller's thread freed into the loop thread's malloc arena.
final class ReceivedHeaderBytes {
    let bytes: UnsafeMutablePointer<UInt8>
    let byteCount: Int

    /// Takes over `bytes`, a buffer of ``RecycledBuffers/headers`` holding `byteCount` bytes.
    init(taking bytes: UnsafeMutablePointer<UInt8>, byteCount: Int) {
        self.bytes = bytes
        self.byteCount = byteCount
        LiveObjects.created(.headerBlock)
    }

    deinit {
        LiveObjects.destroyed(.headerBlock)
        RecycledBuffers.headers.give(bytes)
    }
}

/// Collects the header lines of the last response, as curl's header callback hands them over:
/// status lines, fields, the blank line that ends a head, and trailers.
///
/// The lines go into a raw buffer the collector owns, with no object and no reference count to
/// check per line; reading ``headers`` hands the buffer to a ``ReceivedHeaderBytes``, made
/// once, then (see Docs/Performance.md). Every line of every response passes here.
struct ReceivedHeaderCollector: ~Copyable {
    /// The last response's field lines, each ending with `\n` (see ``ReceivedHeaderBlock``),
    /// while no one has read them; nil before the first line and after a read.
    private var bytes: UnsafeMutablePointer<UInt8>?
    private var byteCount = 0
    private var capacity = 0
    /// What ``headers`` returned, returned again until another line arrives: the block made of
    /// the lines, or, once obsolete folding was met, the fields as strings, which later lines join.
    private var handedOut: HTTPHeaders?
    /// Room for a typical response's fields, so most never grow.
    static let initialCapacity = 512
    /// Obsolete line folding met: the fields are kept as strings (``handedOut``) from then on.
    private var folding = false
    /// The blank line that ends the head arrived: later lines are trailers, not kept.
    private(set) var headEnded = false
    /// A `Content-Encoding` line passed (the transport decodes by it before anyone reads the
    /// headers). A flag, not the value: the collector lives in every waiting transfer, and a
    /// string here cost 32 bytes a waiting query (the 100,000-in-flight probe).
    private var sawContentEncoding = false

    init() {}

    deinit { if let bytes { RecycledBuffers.headers.give(bytes) } }

    /// Takes one line as curl delivered it, line break included. Returns true when it began a
    /// new response (a status line: the first, or one after a redirect, a `100 Continue` or a
    /// proxy's CONNECT), whose fields replace those collected so far.
    mutating func receive(_ line: UnsafeRawBufferPointer) -> Bool {
        // Through the base pointer: every line of every response passes here (Docs/Performance.md, "Decisions").
        guard let start = line.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        var end = line.count
        while end > 0, start[end - 1] == UInt8(ascii: "\n") || start[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { // the blank line that ends a head: later lines are trailers
            headEnded = true
            return false
        }
        if end >= 5, start[0] == UInt8(ascii: "H"), start[1] == UInt8(ascii: "T"), start[2] == UInt8(ascii: "T"),
           start[3] == UInt8(ascii: "P"), start[4] == UInt8(ascii: "/") {
            byteCount = 0
            handedOut = nil
            folding = false
            headEnded = false
            sawContentEncoding = false
            return true
        }
        guard !headEnded else { return false }
        if folding || HTTPSyntax.isBlank(start[0]) {
            receiveFolding(UnsafeRawBufferPointer(start: start, count: end))
        } else {
            // Three byte tests turn away every other line (the colon right after 16 bytes first).
            if end > 16, start[16] == UInt8(ascii: ":"), start[7] == UInt8(ascii: "-"), Self.isContentEncoding(start) {
                sawContentEncoding = true
            }
            append(start, end)
        }
        return false
    }

    /// This response's `Content-Encoding`, every line of it joined; nil without one.
    var contentEncoding: String? {
        mutating get {
            guard sawContentEncoding || folding else { return nil }
            let values = headers.values(for: "Content-Encoding")
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }
    }

    private static func isContentEncoding(_ line: UnsafePointer<UInt8>) -> Bool {
        var index = 0
        for byte in "content-encoding".utf8 {
            guard HTTPSyntax.lower(line[index]) == byte else { return false }
            index += 1
        }
        return true
    }


    /// Copies one field line into the buffer, with `\n` after it.
    @inline(__always)
    private mutating func append(_ line: UnsafePointer<UInt8>, _ count: Int) {
        if handedOut != nil || capacity - byteCount <= count { makeRoom(for: count + 1) }
        let end = bytes! + byteCount
        end.initialize(from: line, count: count)
        end[count] = UInt8(ascii: "\n")
        byteCount += count + 1
    }

    /// A buffer with room for `needed` more bytes, holding the lines so far: those handed out
    /// (read early, then more arrived), or those in a buffer too small.
    private mutating func makeRoom(for needed: Int) {
        let kept = handedOut?.receivedBlock.map { UnsafeRawBufferPointer(start: $0.storage.bytes, count: $0.storage.byteCount) }
            ?? UnsafeRawBufferPointer(start: bytes, count: byteCount)
        let wanted = Swift.max(kept.count + needed, 2 * kept.count, Self.initialCapacity)
        let grown = RecycledBuffers.headers.take(atLeast: wanted)
        if let base = kept.baseAddress { grown.copyMemory(from: base, byteCount: kept.count) }
        if let bytes { RecycledBuffers.headers.give(bytes) }
        bytes = grown.assumingMemoryBound(to: UInt8.self)
        byteCount = kept.count
        capacity = RecycledBuffers.capacity(of: grown)
        handedOut = nil
    }

    /// A line once obsolete folding was met (a field's continuation, or any field after one):
    /// the fields are kept as strings from then on. Rare; out of the way of the common lines.
    private mutating func receiveFolding(_ content: UnsafeRawBufferPointer) {
        if !folding {
            handedOut = headers
            folding = true
        }
        guard let first = content.first, HTTPSyntax.isBlank(first) else { // a field after the folding
            var line = ReceivedHeaderCollector()
            line.append(content.baseAddress!.assumingMemoryBound(to: UInt8.self), content.count)
            for field in line.headers.fields { handedOut!.add(name: field.name, value: field.value) }
            return
        }
        var start = 0
        while start < content.count, HTTPSyntax.isBlank(content[start]) { start += 1 }
        handedOut!.appendToLastValue(String(decoding: content[start...], as: UTF8.self))
    }

    /// The last response's fields. The first read hands the buffer to the block they share.
    var headers: HTTPHeaders {
        mutating get {
            if let handedOut { return handedOut }
            guard let bytes, byteCount > 0 else { return HTTPHeaders() }
            let headers = HTTPHeaders(received: ReceivedHeaderBlock(storage: ReceivedHeaderBytes(taking: bytes, byteCount: byteCount)))
            self.bytes = nil
            byteCount = 0
            capacity = 0
            handedOut = headers
            return headers
        }
    }
}
