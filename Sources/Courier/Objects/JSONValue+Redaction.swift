extension Redaction {
    /// `value` with every secret in it replaced by ``placeholder``: a member named by
    /// ``isSecret(_:in:)`` (its whole value, object or string), the value of a header echoed as a
    /// pair, `["Authorization", "…"]` or `{"name": "Authorization", "value": "…"}` (an echo
    /// service's answer, a HAR entry), and credentials standing in any string (``text(_:)``).
    /// Numbers, booleans and nulls are kept: no credential is one, and Google's error bodies keep
    /// their `"code": 404`. The HTTP log and an ``APIObject``'s description print through it.
    public static func json(_ value: JSONValue) -> JSONValue {
        json(value, parent: nil)
    }

    private static func json(_ value: JSONValue, parent: String?) -> JSONValue {
        switch value {
        case .object(let object):
            // A header as a pair hides its value; its other members are walked as any object's
            // (an object shaped like a pair may hold a key file's members too: FuzzJSON found one).
            let isSecretPair = if case .string(let name)? = object["name"] { isSecret(name) } else { false }
            var redacted = JSONObject()
            for (key, member) in object {
                if isSecretPair && key == "value" {
                    redacted[key] = .string(placeholder)
                    continue
                }
                switch member {
                case .number, .bool, .null: redacted[key] = member
                default: redacted[key] = isSecret(key, in: parent) ? .string(placeholder) : json(member, parent: key)
                }
            }
            return .object(redacted)
        case .array(let array):
            if array.count == 2, case .string(let name) = array[0], case .string = array[1], isSecret(name) {
                return .array([array[0], .string(placeholder)])
            }
            return .array(array.map { json($0, parent: parent) })
        case .string(let text):
            return .string(Redaction.text(text)) // an echoed header or URL
        default:
            return value
        }
    }
}
