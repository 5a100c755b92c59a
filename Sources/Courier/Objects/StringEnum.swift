/// A string-valued enumeration that tolerates values it does not know: generated clients use it
/// for discovery `enum`s, so a server adding a value never breaks decoding.
///
/// ```swift
/// public struct Projection: StringEnum {
///     public let rawValue: String
///     public init(rawValue: String) { self.rawValue = rawValue }
///     public static let full = Projection(rawValue: "full")
///     public static let noAcl = Projection(rawValue: "noAcl")
/// }
/// ```
public protocol StringEnum: RawRepresentable<String>, JSONConvertible, QueryParameterValue, Hashable, Codable,
    CustomStringConvertible, ExpressibleByStringLiteral
{
    init(rawValue: String)
}

extension StringEnum {
    public init?(jsonValue: JSONValue) {
        guard let text = jsonValue.stringValue else { return nil }
        self.init(rawValue: text)
    }

    public var jsonValue: JSONValue { .string(rawValue) }
    public var queryParameterText: String { rawValue }
    public var description: String { rawValue }

    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
