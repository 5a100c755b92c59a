/// A JSON number that keeps integers exactly: 64-bit values as integers, larger ones as their
/// literal text, fractions as `Double`.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral
{
    enum Storage: Sendable {
        case int(Int64)
        case double(Double)
        /// An integer beyond 64 bits, kept as written.
        case literal(String)
    }

    let storage: Storage

    public init(_ value: Int64) { storage = .int(value) }
    public init(_ value: Int) { storage = .int(Int64(value)) }
    public init(_ value: Double) { storage = .double(value) }
    public init(integerLiteral value: Int64) { storage = .int(value) }
    public init(floatLiteral value: Double) { storage = .double(value) }

    /// An integer of any size from its decimal text (an optional `-` and digits).
    public init?(integerText text: String) {
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (48...57).contains(first),
              text.utf8.dropFirst(first == UInt8(ascii: "-") ? 1 : 0).allSatisfy({ (48...57).contains($0) }),
              text.utf8.count > (first == UInt8(ascii: "-") ? 1 : 0)
        else { return nil }
        storage = Int64(text).map(Storage.int) ?? .literal(text)
    }

    init(storage: Storage) { self.storage = storage }

    /// The value when it is an integer that fits 64 bits (a fraction-free double included).
    public var int64Value: Int64? {
        switch storage {
        case .int(let value): value
        case .double(let value): Int64(exactly: value)
        case .literal: nil
        }
    }

    /// The value when it is a non-negative integer that fits 64 bits unsigned.
    public var uint64Value: UInt64? {
        switch storage {
        case .int(let value): UInt64(exactly: value)
        case .double(let value): UInt64(exactly: value)
        case .literal(let text): UInt64(text)
        }
    }

    /// The value as a `Double`, rounded if it has more precision.
    public var doubleValue: Double {
        switch storage {
        case .int(let value): Double(value)
        case .double(let value): value
        case .literal(let text): Double(text) ?? .nan
        }
    }

    /// Whether the number is an integer (of any size).
    public var isInteger: Bool {
        switch storage {
        case .int, .literal: true
        case .double(let value): value.rounded(.towardZero) == value && value.isFinite
        }
    }

    /// The JSON text of the number.
    public var description: String {
        switch storage {
        case .int(let value): String(value)
        case .literal(let text): text
        case .double(let value):
            if let exact = Int64(exactly: value), abs(value) < 1e15 { String(exact) } else { "\(value)" }
        }
    }

    /// Numbers are equal when their values are: `1` equals `1.0`.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case let (.int(a), .int(b)): a == b
        case let (.literal(a), .literal(b)): a == b
        case (.literal, _), (_, .literal): false
        default: lhs.doubleValue == rhs.doubleValue && lhs.int64Value == rhs.int64Value
        }
    }

    public func hash(into hasher: inout Hasher) {
        if let integer = int64Value {
            hasher.combine(integer)
        } else if case .literal(let text) = storage {
            hasher.combine(text)
        } else {
            hasher.combine(doubleValue)
        }
    }
}
