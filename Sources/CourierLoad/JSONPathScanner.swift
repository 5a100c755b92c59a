import Courier
import Foundation

/// Finds the value at a JSON path in raw bytes without building the document: values off the
/// path are skipped, not parsed, and only the value found is parsed. A load test checks every
/// response, and parsing each whole body into a tree cost more than the request itself.
///
/// It reads well-formed JSON exactly; what it skips is not validated, so a malformed body may
/// yield a value where a full parser would have refused (checks then judge that value).
struct JSONPathScanner {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    /// The value at `steps` in `body`; nil when the path is not there or the body is not JSON.
    static func value(at steps: [LoadCheck.PathStep], in body: Data) -> JSONValue? {
        body.withUnsafeBytes { bytes in
            var scanner = JSONPathScanner(bytes: bytes)
            return scanner.find(steps)
        }
    }

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private mutating func find(_ steps: [LoadCheck.PathStep]) -> JSONValue? {
        skipWhitespace()
        if bytes.count - index >= 3, bytes[index] == 0xEF, bytes[index + 1] == 0xBB, bytes[index + 2] == 0xBF { index += 3 }
        for step in steps {
            skipWhitespace()
            switch step {
            case .member(let name):
                guard enterMember(Array(name.utf8)) else { return nil }
            case .index(let position):
                guard enterElement(position) else { return nil }
            case .length:
                return count().map { .number(JSONNumber($0)) }
            }
        }
        skipWhitespace()
        let start = index
        guard skipValue() else { return nil }
        return try? JSONValue(parsing: Data(bytes[start..<index]))
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    /// In an object, moves to the value of member `name`.
    private mutating func enterMember(_ name: [UInt8]) -> Bool {
        guard current == UInt8(ascii: "{") else { return false }
        index += 1
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { return false } // `}`: not there
            let keyStart = index
            guard skipString() else { return false }
            let matches = keyMatches(name, bytes[keyStart..<index])
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return false }
            index += 1
            skipWhitespace()
            if matches { return true }
            guard skipValue() else { return false }
            skipWhitespace()
            guard current == UInt8(ascii: ",") else { return false }
            index += 1
        }
    }

    /// A key with escapes is decoded before comparing; a plain one is compared as bytes.
    private func keyMatches(_ name: [UInt8], _ quoted: Slice<UnsafeRawBufferPointer>) -> Bool {
        let raw = quoted.dropFirst().dropLast()
        if !raw.contains(UInt8(ascii: "\\")) { return raw.elementsEqual(name) }
        guard case .string(let key)? = try? JSONValue(parsing: Data(quoted)) else { return false }
        return key.utf8.elementsEqual(name)
    }

    /// In an array, moves to element `position`.
    private mutating func enterElement(_ position: Int) -> Bool {
        guard current == UInt8(ascii: "[") else { return false }
        index += 1
        for _ in 0..<position {
            skipWhitespace()
            guard current != UInt8(ascii: "]"), skipValue() else { return false }
            skipWhitespace()
            guard current == UInt8(ascii: ",") else { return false }
            index += 1
        }
        skipWhitespace()
        return current != nil && current != UInt8(ascii: "]")
    }

    /// Elements of an array, members of an object, or characters of a string.
    private mutating func count() -> Int? {
        switch current {
        case UInt8(ascii: "\""):
            let start = index
            guard skipString(), case .string(let text)? = try? JSONValue(parsing: Data(bytes[start..<index])) else { return nil }
            return text.count
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            let close = current == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")
            index += 1
            skipWhitespace()
            if current == close { return 0 }
            var count = 0
            while true {
                guard skipValue() else { return nil } // in an object, the key
                skipWhitespace()
                if close == UInt8(ascii: "}") {
                    guard current == UInt8(ascii: ":") else { return nil }
                    index += 1
                    skipWhitespace()
                    guard skipValue() else { return nil }
                    skipWhitespace()
                }
                count += 1
                if current == close { return count }
                guard current == UInt8(ascii: ",") else { return nil }
                index += 1
                skipWhitespace()
            }
        default:
            return nil
        }
    }

    /// Past one string, from its opening quote.
    private mutating func skipString() -> Bool {
        index += 1
        while let byte = current {
            index += 1
            if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { return true }
        }
        return false
    }

    /// Past one value of any kind.
    private mutating func skipValue() -> Bool {
        switch current {
        case nil:
            return false
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""): guard skipString() else { return false }; continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { index += 1; return true }
                default: break
                }
                index += 1
            }
            return false
        default:
            let start = index
            while let byte = current, byte != UInt8(ascii: ","), byte != UInt8(ascii: "}"), byte != UInt8(ascii: "]"),
                  byte != 0x20, byte != 0x0A, byte != 0x0D, byte != 0x09 { index += 1 }
            return index > start
        }
    }
}
