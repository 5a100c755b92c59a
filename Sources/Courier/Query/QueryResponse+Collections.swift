import Foundation

/// A response that is a JSON map (a schema made of `additionalProperties`, such as Identity
/// Toolkit's `getPublicKeys`, `{"keyId": "PEM…"}`): every value converted, or a typed error
/// naming the first that does not.
extension Dictionary: QueryResponse where Key == String, Value: JSONConvertible {
    public static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> Self {
        let object = try JSONObject(responseBody: response.body, limits: limits)
        var result: [String: Value] = [:]
        result.reserveCapacity(object.count)
        for (key, member) in object {
            guard let value = Value(jsonValue: member) else {
                throw QueryError(code: .unexpectedResponse, message: "the value of \"\(key)\" is \(member.kindName), not \(Value.self)")
            }
            result[key] = value
        }
        return result
    }
}

/// A response that is a JSON array: every element converted, or a typed error naming the first
/// that does not.
extension Array: QueryResponse where Element: JSONConvertible {
    public static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> Self {
        let value = try JSONValue(responseBody: response.body, limits: limits)
        guard case .array(let elements) = value else {
            throw QueryError(code: .unexpectedResponse, message: "expected a JSON array, got \(value.kindName)")
        }
        return try elements.enumerated().map { index, element in
            guard let converted = Element(jsonValue: element) else {
                throw QueryError(code: .unexpectedResponse, message: "element \(index) is \(element.kindName), not \(Element.self)")
            }
            return converted
        }
    }
}
