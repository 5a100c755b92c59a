import Foundation

/// `JSONValue` and `JSONObject` work with any `Encoder`/`Decoder`, so API objects can sit inside
/// other Codable types. (Through Foundation's decoders, object member order is not kept; Courier's
/// own parser keeps it.)
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .number(JSONNumber(integer))
        } else if let double = try? container.decode(Double.self) {
            self = .number(JSONNumber(double))
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode(JSONObject.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number):
            switch number.storage {
            case .int(let value): try container.encode(value)
            case .double(let value): try container.encode(value)
            case .literal(let text): try container.encode(Decimal(string: text) ?? 0)
            }
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}

extension JSONObject: Codable {
    struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: MemberKey.self)
        var object = JSONObject()
        for key in container.allKeys {
            object[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
        }
        self = object
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        for (key, value) in members {
            try container.encode(value, forKey: MemberKey(stringValue: key))
        }
    }
}
