import OrderedCollections

/// A JSON object: members in the order they arrived, looked up by key.
public struct JSONObject: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence {
    public typealias Element = (key: String, value: JSONValue)
    public typealias Key = String
    public typealias Value = JSONValue

    @usableFromInline var members: OrderedDictionary<String, JSONValue>

    public init() { members = [:] }

    public init(_ pairs: some Sequence<(String, JSONValue)>) {
        members = OrderedDictionary(pairs, uniquingKeysWith: { _, last in last })
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }

    init(members: OrderedDictionary<String, JSONValue>) {
        self.members = members
    }

    /// The member `key`. Setting `nil` removes it; setting `.null` keeps it as an explicit JSON null.
    @inlinable public subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    public var keys: [String] { Array(members.keys) }
    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    public func makeIterator() -> some IteratorProtocol<Element> {
        members.lazy.map { (key: $0.key, value: $0.value) }.makeIterator()
    }

    /// Object equality ignores member order, as JSON does.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (key, value) in lhs.members where rhs.members[key] != value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        var combined = 0
        for (key, value) in members { combined ^= key.hashValue ^ value.hashValue &* 31 }
        hasher.combine(combined)
    }
}
