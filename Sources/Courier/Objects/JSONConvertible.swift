import Foundation

/// A type that converts to and from a JSON value: the field types of API objects.
public protocol JSONConvertible: Sendable {
    /// The value from JSON, or nil when the JSON has another shape.
    init?(jsonValue: JSONValue)
    var jsonValue: JSONValue { get }
}

extension JSONValue: JSONConvertible {
    public init?(jsonValue: JSONValue) { self = jsonValue }
    public var jsonValue: JSONValue { self }
}

extension JSONObject: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard case .object(let object) = jsonValue else { return nil }
        self = object
    }
    public var jsonValue: JSONValue { .object(self) }
}

extension String: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard case .string(let string) = jsonValue else { return nil }
        self = string
    }
    public var jsonValue: JSONValue { .string(self) }
}

extension Bool: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard case .bool(let flag) = jsonValue else { return nil }
        self = flag
    }
    public var jsonValue: JSONValue { .bool(self) }
}

extension Double: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        switch jsonValue {
        case .number(let number): self = number.doubleValue
        case .string(let text): guard let value = Double(text) else { return nil }; self = value
        default: return nil
        }
    }
    public var jsonValue: JSONValue { .number(JSONNumber(self)) }
}

extension Float: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard let double = Double(jsonValue: jsonValue) else { return nil }
        self = Float(double)
    }
    public var jsonValue: JSONValue { .number(JSONNumber(Double(self))) }
}

/// Integers read a JSON number or, as Google's APIs send 64-bit values, a decimal string.
extension JSONConvertible where Self: FixedWidthInteger {
    public init?(jsonValue: JSONValue) {
        switch jsonValue {
        case .number(let number):
            if let value = number.int64Value.flatMap(Self.init(exactly:)) {
                self = value
            } else if let value = number.uint64Value.flatMap(Self.init(exactly:)) {
                self = value
            } else {
                return nil
            }
        case .string(let text):
            guard let value = Self(text) else { return nil }
            self = value
        default:
            return nil
        }
    }
}

extension Int: JSONConvertible {
    public var jsonValue: JSONValue { .number(JSONNumber(Int64(self))) }
}

extension Int32: JSONConvertible {
    public var jsonValue: JSONValue { .number(JSONNumber(Int64(self))) }
}

extension UInt32: JSONConvertible {
    public var jsonValue: JSONValue { .number(JSONNumber(Int64(self))) }
}

/// 64-bit integers are written as JSON strings, as Google's APIs expect (`format: int64`):
/// a JSON number would lose precision in JavaScript clients.
extension Int64: JSONConvertible {
    public var jsonValue: JSONValue { .string(String(self)) }
}

extension UInt64: JSONConvertible {
    public var jsonValue: JSONValue { .string(String(self)) }
}

/// RFC 3339 timestamps, with or without fractional seconds.
extension Date: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard case .string(let text) = jsonValue, let date = RFC3339.parse(text) else { return nil }
        self = date
    }
    public var jsonValue: JSONValue { .string(RFC3339.format(self)) }
}

/// Base64 text (standard or URL-safe alphabet), as Google's `format: byte` fields carry bytes.
extension Data: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard case .string(let text) = jsonValue, let data = Data(anyBase64: text) else { return nil }
        self = data
    }
    public var jsonValue: JSONValue { .string(base64EncodedString()) }
}

extension Array: JSONConvertible where Element: JSONConvertible {
    /// Elements that do not convert are skipped, so one odd element does not hide the others.
    public init?(jsonValue: JSONValue) {
        guard case .array(let array) = jsonValue else { return nil }
        self = array.compactMap(Element.init(jsonValue:))
    }
    public var jsonValue: JSONValue { .array(map(\.jsonValue)) }
}

extension Dictionary: JSONConvertible where Key == String, Value: JSONConvertible {
    public init?(jsonValue: JSONValue) {
        guard case .object(let object) = jsonValue else { return nil }
        var result: [String: Value] = [:]
        for (key, member) in object { if let value = Value(jsonValue: member) { result[key] = value } }
        self = result
    }
    public var jsonValue: JSONValue {
        .object(JSONObject(sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value.jsonValue) }))
    }
}
