import Foundation

/// A value that can be a URL query parameter.
public protocol QueryParameterValue: Sendable {
    var queryParameterText: String { get }
}

extension String: QueryParameterValue { public var queryParameterText: String { self } }
extension Int: QueryParameterValue { public var queryParameterText: String { String(self) } }
extension Int32: QueryParameterValue { public var queryParameterText: String { String(self) } }
extension Int64: QueryParameterValue { public var queryParameterText: String { String(self) } }
extension UInt32: QueryParameterValue { public var queryParameterText: String { String(self) } }
extension UInt64: QueryParameterValue { public var queryParameterText: String { String(self) } }
extension Double: QueryParameterValue { public var queryParameterText: String { String(self) } }
extension Float: QueryParameterValue { public var queryParameterText: String { String(self) } }
extension Bool: QueryParameterValue { public var queryParameterText: String { self ? "true" : "false" } }
/// Dates travel as RFC 3339 timestamps.
extension Date: QueryParameterValue { public var queryParameterText: String { RFC3339.format(self) } }
/// Bytes (Discovery's `format: byte`) travel as URL-safe base64 without padding, the alphabet
/// that needs no escaping in a URL; Google's APIs read both base64 alphabets.
extension Data: QueryParameterValue { public var queryParameterText: String { base64URLEncoded } }
/// An object parameter (Discovery's `type: object`) travels as its compact JSON text.
extension JSONObject: QueryParameterValue {
    public var queryParameterText: String { String(decoding: serialized(), as: UTF8.self) }
}
/// Any JSON value as a parameter: strings as they are, numbers and booleans as JSON writes them,
/// arrays and objects as compact JSON text.
extension JSONValue: QueryParameterValue {
    public var queryParameterText: String {
        if case .string(let text) = self { return text }
        return String(decoding: serialized(), as: UTF8.self)
    }
}

/// URL query parameters in order, a name possibly repeated (`?label=a&label=b`).
public struct QueryParameters: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public struct Item: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    public private(set) var items: [Item] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, any QueryParameterValue)...) {
        for (name, value) in elements { append(name, value) }
    }

    /// The first value of `name`; setting replaces every value of that name (nil removes them).
    public subscript(name: String) -> String? {
        get { items.first { $0.name == name }?.value }
        set {
            items.removeAll { $0.name == name }
            if let newValue { items.append(Item(name: name, value: newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        items.filter { $0.name == name }.map(\.value)
    }

    /// Adds a value, keeping earlier ones of the same name.
    public mutating func append(_ name: String, _ value: any QueryParameterValue) {
        items.append(Item(name: name, value: value.queryParameterText))
    }

    /// Replaces every value of `name` with `value` (nil removes them).
    public mutating func set(_ name: String, _ value: (any QueryParameterValue)?) {
        self[name] = value?.queryParameterText
    }

    /// Replaces every value of `name` with `values`, one item each.
    public mutating func set(_ name: String, values: [any QueryParameterValue]) {
        items.removeAll { $0.name == name }
        for value in values { append(name, value) }
    }

    public var isEmpty: Bool { items.isEmpty }

    /// `a=1&b=x%20y`: names and values percent-encoded except unreserved characters.
    public var encoded: String {
        items.map {
            URITemplate.percentEncode($0.name, keep: URITemplate.isUnreserved) + "="
                + URITemplate.percentEncode($0.value, keep: URITemplate.isUnreserved)
        }.joined(separator: "&")
    }
}
