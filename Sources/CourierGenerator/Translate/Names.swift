/// Swift-safe identifiers from discovery names: `max-results` → `maxResults`, `2fa` → `_2fa`,
/// `import` → `` `import` ``, `@type` → `type`. Collisions get a numeric suffix, in a fixed order.
enum Names {
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static",
        "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do", "else",
        "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "as", "Any",
        "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "await", "async", "some", "any",
        "consume", "borrowing", "consuming", "copy", "discard", "each", "macro", "package", "Type", "Protocol",
    ]

    /// Type names the generated code refers to unqualified: a schema or nested type of that
    /// name would shadow them, so such a type gets a suffix.
    static let reservedTypeNames: Set<String> = [
        "String", "Int", "Int32", "Int64", "UInt32", "UInt64", "Double", "Float", "Bool", "Date", "Data", "Duration", "URL",
        "Array", "Dictionary", "Optional", "Set", "Error", "Result", "Type", "Self", "Protocol", "Any", "Never", "Void",
        "Query", "QueryConvertible", "QueryParameters", "APIObject", "APICollection", "JSONValue", "JSONObject",
        "UserProperties", "UploadParameters", "APIDescription", "StringEnum", "MediaData", "ObjectResolver", "Sendable",
        "Hashable", "Codable", "Courier", "Foundation", "HTTPMethod", "APIPage", "StandardParameters",
        "ExecutionParameters", "NoContent", "CalendarDate", "MediaUploadLimits", "BatchKey", "QueryResponse",
    ]

    /// Members a page (an `APICollection`, so a `RandomAccessCollection`) has from `Collection`.
    static let collectionMembers: Set<String> = [
        "count", "first", "last", "isEmpty", "indices", "startIndex", "endIndex", "underestimatedCount", "lazy",
    ]

    /// Associated types of `Collection` a page's nested types must not take.
    static let collectionTypes: Set<String> = ["Element", "Index", "Indices", "SubSequence", "Iterator", "Item"]

    /// Instance members of `APIObject` and `APICollection` a property must not redeclare.
    static let objectMembers: Set<String> = [
        "json", "userProperties", "kindString", "jsonValue", "setNull", "isNull", "hashValue", "itemsJSON", "hash",
        "encode", "init", "patch", "debugDescription", "customMirror",
    ]

    /// The words of `name`, split at anything that is not a letter or digit; an all-capitals
    /// word of a longer name reads as a word (`STORAGE_CLASS` → `Storage`, `Class`).
    static func words(_ name: String) -> [String] {
        let parts = name.split { !($0.isLetter || $0.isNumber) || !$0.isASCII }.map(String.init)
        guard parts.count > 1 else { return parts }
        return parts.map { part in
            part.count > 1 && part.allSatisfy({ $0.isUppercase || $0.isNumber }) ? part.prefix(1) + part.dropFirst().lowercased() : part
        }
    }

    /// `max-results` → `maxResults`.
    static func lowerCamel(_ name: String) -> String {
        let parts = words(name)
        guard let first = parts.first else { return "_" }
        var result = lowercasedFirst(first)
        for part in parts.dropFirst() { result += uppercasedFirst(part) }
        if result.first?.isNumber == true { result = "_" + result }
        return result
    }

    /// `bucket.access-control` → `BucketAccessControl`.
    static func upperCamel(_ name: String) -> String {
        var result = words(name).map { uppercasedFirst($0) }.joined()
        if result.isEmpty { result = "_" }
        if result.first?.isNumber == true { result = "_" + result }
        return result
    }

    /// An identifier usable as a property, argument or function name.
    static func escaped(_ identifier: String) -> String {
        keywords.contains(identifier) ? "`\(identifier)`" : identifier
    }

    /// An identifier as it appears without backticks (for `self.x` and argument labels).
    static func bare(_ identifier: String) -> String {
        identifier.trimmingCharacters(in: ["`"])
    }

    private static func lowercasedFirst(_ text: String) -> String {
        // `URLMap` → `urlMap`, `ID` → `id`: lower the leading run of capitals but the last before a lowercase.
        let characters = Array(text)
        var index = 0
        while index < characters.count, characters[index].isUppercase { index += 1 }
        if index == 0 { return text }
        if index == characters.count { return text.lowercased() }
        let cut = index > 1 ? index - 1 : index
        return String(characters[..<cut]).lowercased() + String(characters[cut...])
    }

    private static func uppercasedFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }

    /// Gives each name in `names` (in order) a unique form, avoiding `taken`: the first keeps
    /// its name, later ones get `2`, `3`, …
    static func unique(_ names: [String], avoiding taken: Set<String> = []) -> [String] {
        var used = taken
        return names.map { name in
            var candidate = name
            var counter = 2
            while used.contains(bare(candidate)) {
                candidate = bare(name) + String(counter)
                counter += 1
            }
            used.insert(bare(candidate))
            return candidate
        }
    }
}
