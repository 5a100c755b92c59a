extension JSONObject {
    /// The smallest patch that turns `original` into `modified` (RFC 7386 JSON merge patch,
    /// as Google's PATCH methods take it): changed and added members, removed ones as explicit
    /// nulls, nested objects diffed member by member, arrays replaced whole.
    public static func patch(from original: JSONObject, to modified: JSONObject) -> JSONObject {
        var patch = JSONObject()
        for (key, newValue) in modified.members {
            guard let oldValue = original.members[key] else {
                patch[key] = newValue
                continue
            }
            if case .object(let oldObject) = oldValue, case .object(let newObject) = newValue {
                let nested = JSONObject.patch(from: oldObject, to: newObject)
                if !nested.isEmpty { patch[key] = .object(nested) }
            } else if oldValue != newValue {
                patch[key] = newValue
            }
        }
        for key in original.members.keys where modified.members[key] == nil {
            patch[key] = .null
        }
        return patch
    }
}

extension APIObject {
    /// An object holding only what changed from `original` to `modified`, for a PATCH query
    /// (GTLR's `patchObjectFromOriginal:`).
    public static func patch(from original: Self, to modified: Self) -> Self {
        Self(json: JSONObject.patch(from: original.json, to: modified.json))
    }
}
