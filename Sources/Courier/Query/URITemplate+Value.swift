extension URITemplate {
    /// A variable's value in an RFC 6570 expansion: a string, a list, or an associative array.
    ///
    /// ```swift
    /// let template: URITemplate = "/search{?q,lang*}{&filter*}"
    /// try template.expand(["q": "uri templates", "lang": ["en", "fr"], "filter": ["kind": "note"]])
    /// // "/search?q=uri%20templates&lang=en&lang=fr&kind=note"
    /// ```
    ///
    /// A list or an associative array with no members counts as undefined, as the RFC says: it
    /// expands to nothing, and a path that requires it reports it missing.
    public enum Value: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
        ExpressibleByDictionaryLiteral {
        /// One string; the only kind a prefix modifier (`{var:3}`) applies to.
        case string(String)
        /// Members joined by commas, or one by one with explode (`{/list*}` → `/a/b`).
        case list([String])
        /// An associative array: name–value pairs, expanded in this order (`{?keys*}` → `?a=1&b=2`).
        case pairs([Pair])

        /// One member of an associative array.
        public struct Pair: Sendable, Hashable {
            public var name: String
            public var value: String

            public init(name: String, value: String) {
                self.name = name
                self.value = value
            }
        }

        /// An associative array from a dictionary, its names in ascending order, so the same
        /// dictionary always makes the same URL.
        public init(_ dictionary: [String: String]) {
            self = .pairs(dictionary.sorted { $0.key < $1.key }.map { Pair(name: $0.key, value: $0.value) })
        }

        public init(stringLiteral value: String) {
            self = .string(value)
        }

        public init(arrayLiteral elements: String...) {
            self = .list(elements)
        }

        /// Pairs in the literal's order.
        public init(dictionaryLiteral elements: (String, String)...) {
            self = .pairs(elements.map { Pair(name: $0.0, value: $0.1) })
        }

        /// Undefined, as RFC 6570 section 2.3 counts it: an empty list or associative array.
        var isUndefined: Bool {
            switch self {
            case .string: false
            case .list(let items): items.isEmpty
            case .pairs(let pairs): pairs.isEmpty
            }
        }
    }
}
