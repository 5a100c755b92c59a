import Foundation

// Self-contained on purpose (Foundation only): the fuzzer compiles this file alone.

/// One part of a multipart body: its headers and its content.
struct MultipartPart: Sendable, Equatable {
    var headers: [(name: String, value: String)]
    var body: Data

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    static func == (lhs: MultipartPart, rhs: MultipartPart) -> Bool {
        lhs.body == rhs.body && lhs.headers.map { "\($0.name):\($0.value)" } == rhs.headers.map { "\($0.name):\($0.value)" }
    }
}

/// What went wrong reading a multipart batch response, for the whole body or for one part.
struct MultipartError: CodedError, Hashable {
    enum Code: String, Sendable {
        /// No boundary delimiter at all: not a multipart body with this boundary.
        case noParts
        /// The body ends before the closing delimiter.
        case truncated
        /// A part has no blank line between its headers and its content.
        case malformedPart
        /// A part's content is not an HTTP response.
        case notHTTP
        /// The `Content-Type` has no usable boundary.
        case missingBoundary
    }

    let code: Code
    let message: String
}

/// Parses multipart bodies (RFC 2046) and the `application/http` responses inside them, as
/// Google's batch endpoint returns them. A pure function over bytes: tested and fuzzed without IO.
///
/// Tolerant where real servers vary (LF-only line ends, missing or extra blank lines,
/// transport padding after a delimiter, a quoted boundary), strict where a mistake would
/// misattribute data: a delimiter counts only at the start of a line, and a body without its
/// closing delimiter is reported as truncated.
enum MultipartParser {
    /// The boundary parameter of a `multipart/…` content type, unquoted.
    static func boundary(fromContentType contentType: String) throws(MultipartError) -> String {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard !value.isEmpty, value.utf8.count <= 200 else { break }
            return value
        }
        throw MultipartError(code: .missingBoundary, message: "no boundary in \(contentType.prefix(100))")
    }

    /// The parts of `body`, and whether the closing delimiter was reached. A truncated body
    /// yields the parts that were complete before the cut.
    static func parse(_ body: Data, boundary: String) throws(MultipartError) -> (parts: [MultipartPart], complete: Bool) {
        let bytes = [UInt8](body)
        let delimiter = [UInt8]("--\(boundary)".utf8)
        var parts: [MultipartPart] = []
        guard var position = nextDelimiter(in: bytes, delimiter: delimiter, from: 0, atStart: true) else {
            throw MultipartError(code: .noParts, message: "no delimiter --\(boundary.prefix(70))")
        }
        while true {
            var cursor = position.end
            // "--" right after the delimiter closes the body.
            if cursor + 1 < bytes.count, bytes[cursor] == UInt8(ascii: "-"), bytes[cursor + 1] == UInt8(ascii: "-") {
                return (parts, true)
            }
            // Transport padding, then the line break that ends the delimiter line.
            while cursor < bytes.count, bytes[cursor] == UInt8(ascii: " ") || bytes[cursor] == UInt8(ascii: "\t") { cursor += 1 }
            if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\r") { cursor += 1 }
            guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\n") else { return (parts, false) }
            cursor += 1
            guard let next = nextDelimiter(in: bytes, delimiter: delimiter, from: cursor, atStart: false) else {
                return (parts, false) // the last part never ended: truncated
            }
            parts.append(try part(bytes[cursor..<next.start]))
            position = next
        }
    }

    /// The next delimiter at the start of a line; `start` includes the line break before it.
    private static func nextDelimiter(in bytes: [UInt8], delimiter: [UInt8], from: Int, atStart: Bool)
        -> (start: Int, end: Int)?
    {
        var index = from
        while index + delimiter.count <= bytes.count {
            let lineStart = index == 0 || (atStart && index == from) || bytes[index - 1] == UInt8(ascii: "\n")
            let after = index + delimiter.count
            let terminated = after == bytes.count || [UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "\t"),
                                                      UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains(bytes[after])
            if lineStart, terminated, bytes[index] == delimiter[0], bytes[index..<after].elementsEqual(delimiter) {
                var start = index
                if start > from, bytes[start - 1] == UInt8(ascii: "\n") {
                    start -= 1
                    if start > from, bytes[start - 1] == UInt8(ascii: "\r") { start -= 1 }
                }
                return (start, index + delimiter.count)
            }
            guard let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            index = newline + 1
        }
        return nil
    }

    /// Splits a part into headers and content at the first blank line.
    private static func part(_ bytes: ArraySlice<UInt8>) throws(MultipartError) -> MultipartPart {
        guard let (headerEnd, bodyStart) = blankLine(in: bytes) else {
            // Headers only, with nothing after them, is an empty part; anything else is broken.
            if bytes.allSatisfy({ $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) {
                return MultipartPart(headers: [], body: Data())
            }
            throw MultipartError(code: .malformedPart, message: "a part has no blank line after its headers")
        }
        return MultipartPart(headers: headers(bytes[bytes.startIndex..<headerEnd]), body: Data(bytes[bodyStart...]))
    }

    /// The first empty line: where headers end and where content begins (CRLF or LF line ends).
    static func blankLine(in bytes: ArraySlice<UInt8>) -> (headerEnd: Int, bodyStart: Int)? {
        var index = bytes.startIndex
        // A part may start with the blank line directly (no headers).
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "\n") { return (index, index + 1) }
        if index + 1 < bytes.endIndex, bytes[index] == UInt8(ascii: "\r"), bytes[index + 1] == UInt8(ascii: "\n") {
            return (index, index + 2)
        }
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: "\n") else {
                index += 1
                continue
            }
            var next = index + 1
            if next < bytes.endIndex, bytes[next] == UInt8(ascii: "\r") { next += 1 }
            if next < bytes.endIndex, bytes[next] == UInt8(ascii: "\n") {
                var end = index
                if end > bytes.startIndex, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                return (end, next + 1)
            }
            index += 1
        }
        return nil
    }

    /// `Name: value` lines; folded continuation lines join the previous value.
    static func headers(_ bytes: ArraySlice<UInt8>) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            var line = rawLine
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard !line.isEmpty else { continue }
            if line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t"), !result.isEmpty {
                result[result.count - 1].value += " " + String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { result.append((name, value)) }
        }
        return result
    }

    /// The HTTP response inside an `application/http` part: status, headers and body.
    static func httpResponse(_ content: Data) throws(MultipartError)
        -> (status: Int, headers: [(name: String, value: String)], body: Data)
    {
        let bytes = [UInt8](content)[...]
        var start = bytes.startIndex
        while start < bytes.endIndex, bytes[start] == UInt8(ascii: "\r") || bytes[start] == UInt8(ascii: "\n") { start += 1 }
        let lineEnd = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let statusLine = String(decoding: bytes[start..<lineEnd], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let fields = statusLine.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/"), let status = Int(fields[1]), (100...599).contains(status) else {
            throw MultipartError(code: .notHTTP, message: "expected an HTTP status line, found \(statusLine.prefix(60).debugDescription)")
        }
        let afterStatus = lineEnd < bytes.endIndex ? lineEnd + 1 : bytes.endIndex
        let rest = bytes[afterStatus...]
        var headers: [(name: String, value: String)] = []
        var body = Data()
        if let (headerEnd, bodyStart) = blankLine(in: rest) {
            headers = self.headers(rest[rest.startIndex..<headerEnd])
            body = Data(rest[bodyStart...])
        } else {
            headers = self.headers(rest)
        }
        // A declared length wins over padding the multipart framing may have left.
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }),
           length >= 0, length <= body.count {
            body = body.prefix(length)
        }
        return (status, headers, body)
    }
}
