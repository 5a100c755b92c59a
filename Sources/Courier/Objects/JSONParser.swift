import Foundation

/// Limits on what `JSONValue(parsing:limits:)` accepts.
public struct JSONLimits: Sendable, Hashable {
    /// The deepest nesting of arrays and objects. JSON nested 10,000 deep is rejected, not a stack overflow.
    public var maxDepth: Int
    /// The largest input in bytes.
    public var maxBytes: Int

    public init(maxDepth: Int = 256, maxBytes: Int = 256 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    public static let `default` = JSONLimits()
}

/// Why JSON could not be parsed, and where.
public struct JSONParsingError: CodedError, Hashable {
    enum Code: String, Sendable {
        case syntax, truncated, tooDeep, tooLarge, invalidUTF8, invalidNumber
    }

    let code: Code
    /// The byte offset where parsing stopped.
    public let offset: Int
    public let message: String

    public static let syntax = JSONParsingError(code: .syntax, offset: 0, message: "")
    /// The input ended inside a value: a truncated body.
    public static let truncated = JSONParsingError(code: .truncated, offset: 0, message: "")
    public static let tooDeep = JSONParsingError(code: .tooDeep, offset: 0, message: "")
    public static let tooLarge = JSONParsingError(code: .tooLarge, offset: 0, message: "")
    public static let invalidUTF8 = JSONParsingError(code: .invalidUTF8, offset: 0, message: "")
    public static let invalidNumber = JSONParsingError(code: .invalidNumber, offset: 0, message: "")

    public var description: String { "JSONParsingError.\(code.rawValue) at byte \(offset): \(message)" }
}

extension JSONValue {
    /// Parses UTF-8 JSON text.
    public init(parsing data: Data, limits: JSONLimits = .default) throws(JSONParsingError) {
        guard data.count <= limits.maxBytes else {
            throw JSONParsingError(code: .tooLarge, offset: 0, message: "\(data.count) bytes exceed \(limits.maxBytes)")
        }
        let result: Result<JSONValue, JSONParsingError> = data.withUnsafeBytes { bytes in
            var parser = JSONParser(bytes: bytes, maxDepth: limits.maxDepth)
            do throws(JSONParsingError) {
                return .success(try parser.parseDocument())
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// Parses JSON text.
    public init(parsing text: String, limits: JSONLimits = .default) throws(JSONParsingError) {
        try self.init(parsing: Data(text.utf8), limits: limits)
    }
}

/// A recursive-descent parser over raw bytes. Depth is bounded, so hostile nesting fails
/// with a typed error instead of exhausting the stack.
struct JSONParser {
    private let bytes: UnsafeRawBufferPointer
    private let maxDepth: Int
    private var index = 0
    private var depth = 0
    /// Reused for strings with escapes.
    private var scratch: [UInt8] = []

    init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParsingError) -> JSONValue {
        skipWhitespace()
        // A UTF-8 byte order mark is tolerated, as RFC 8259 allows.
        if bytes.count - index >= 3, bytes[index] == 0xEF, bytes[index + 1] == 0xBB, bytes[index + 2] == 0xBF {
            index += 3
            skipWhitespace()
        }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw error(.syntax, "unexpected data after the JSON value") }
        return value
    }

    private func error(_ code: JSONParsingError.Code, _ message: String) -> JSONParsingError {
        JSONParsingError(code: code, offset: index, message: message)
    }

    @inline(__always) private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONParsingError) -> JSONValue {
        guard index < bytes.count else { throw error(.truncated, "the input ends where a value should start") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try parseObject())
        case UInt8(ascii: "["): return .array(try parseArray())
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error(.syntax, "unexpected character \(Unicode.Scalar(bytes[index]).escaped(asASCII: true))")
        }
    }

    private mutating func expect(_ word: StaticString) throws(JSONParsingError) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw error(.truncated, "the input ends inside \(word)") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw error(.syntax, "expected \(word)")
        }
        index += count
    }

    private mutating func enter() throws(JSONParsingError) {
        depth += 1
        if depth > maxDepth { throw error(.tooDeep, "nesting deeper than \(maxDepth)") }
    }

    private mutating func parseObject() throws(JSONParsingError) -> JSONObject {
        try enter()
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return object
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error(.truncated, "the input ends inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw error(.syntax, "expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count else { throw error(.truncated, "the input ends inside an object") }
            guard bytes[index] == UInt8(ascii: ":") else { throw error(.syntax, "expected ':' after a member name") }
            index += 1
            skipWhitespace()
            object.members[key] = try parseValue()
            skipWhitespace()
            guard index < bytes.count else { throw error(.truncated, "the input ends inside an object") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return object
            default: throw error(.syntax, "expected ',' or '}' in an object")
            }
        }
    }

    private mutating func parseArray() throws(JSONParsingError) -> [JSONValue] {
        try enter()
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return array
        }
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error(.truncated, "the input ends inside an array") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return array
            default: throw error(.syntax, "expected ',' or ']' in an array")
            }
        }
    }

    private mutating func parseString() throws(JSONParsingError) -> String {
        index += 1 // opening quote
        let start = index
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try makeString(slice.bindMemory(to: UInt8.self), at: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error(.syntax, "control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw error(.truncated, "the input ends inside a string") }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try scratch.withUnsafeBufferPointer { buffer throws(JSONParsingError) in
                    try makeString(buffer, at: start)
                }
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error(.truncated, "the input ends inside an escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escaped)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape()
                default: throw error(.syntax, "invalid escape \\\(Unicode.Scalar(escaped))")
                }
            default:
                if byte < 0x20 { throw error(.syntax, "control character in a string") }
                scratch.append(byte)
                index += 1
            }
        }
        throw error(.truncated, "the input ends inside a string")
    }

    private func makeString(_ buffer: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONParsingError) -> String {
        // Plain ASCII needs no validation beyond what the scan did.
        if buffer.allSatisfy({ $0 < 0x80 }) { return String(decoding: buffer, as: UTF8.self) }
        guard let string = String(validating: buffer, as: UTF8.self) else {
            throw JSONParsingError(code: .invalidUTF8, offset: start, message: "a string is not valid UTF-8")
        }
        return string
    }

    private mutating func readHex4() throws(JSONParsingError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error(.truncated, "the input ends inside \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.syntax, "invalid hex digit in \\u")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape() throws(JSONParsingError) {
        var scalar = try readHex4()
        if (0xD800...0xDBFF).contains(scalar) {
            // A high surrogate must be followed by an escaped low surrogate.
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error(.invalidUTF8, "unpaired surrogate in \\u escape")
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error(.invalidUTF8, "unpaired surrogate in \\u escape") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error(.invalidUTF8, "unpaired surrogate in \\u escape")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error(.invalidUTF8, "invalid code point") }
        scratch.append(contentsOf: UTF8.encode(unicode)!)
    }

    private mutating func parseNumber() throws(JSONParsingError) -> JSONNumber {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let digitsStart = index
        var magnitude: UInt64 = 0
        var overflow = false
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            overflow = overflow || o1 || o2
            magnitude = sum
            index += 1
        }
        let digitCount = index - digitsStart
        guard digitCount > 0 else {
            throw index == bytes.count ? error(.truncated, "the input ends inside a number") : error(.invalidNumber, "a number needs digits")
        }
        if digitCount > 1 && bytes[digitsStart] == UInt8(ascii: "0") { throw error(.invalidNumber, "leading zero") }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let fractionStart = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > fractionStart else { throw error(.invalidNumber, "a fraction needs digits") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > exponentStart else { throw error(.invalidNumber, "an exponent needs digits") }
        }
        if isInteger && !overflow {
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return JSONNumber(storage: .int(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)))
            }
            if !negative, magnitude <= UInt64(Int64.max) { return JSONNumber(storage: .int(Int64(magnitude))) }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger { return JSONNumber(storage: .literal(text)) }
        guard let value = Double(text), value.isFinite else { throw error(.invalidNumber, "number out of range: \(text)") }
        return JSONNumber(storage: .double(value))
    }
}
