/// An ordered list of HTTP header fields with case-insensitive lookup.
///
/// Order and repeated names are kept as sent or received. Names and values are validated
/// when a request is sent: a name that is not a token, or a value holding CR, LF or NUL, is
/// rejected with ``TransportError/invalidRequest`` before any byte leaves the process, so
/// header injection cannot happen through Courier.
public struct HTTPHeaders: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Fields as strings, or a response's fields as they arrived, read on demand
    /// (``ReceivedHeaderBlock``). Any change turns the latter into the former.
    private enum Storage: Sendable {
        case fields([Field])
        case received(ReceivedHeaderBlock)
    }

    private var storage: Storage

    var fields: [Field] {
        get {
            switch storage {
            case .fields(let fields): fields
            case .received(let block): block.fields
            }
        }
        _modify {
            var fields = self.fields
            storage = .fields([]) // so `fields` is the only reference while it changes
            defer { storage = .fields(fields) }
            yield &fields
        }
    }

    public init() { storage = .fields([]) }

    public init(_ pairs: [(String, String)]) {
        storage = .fields(pairs.map { Field(name: $0.0, value: $0.1) })
    }

    init(received block: ReceivedHeaderBlock) { storage = .received(block) }

    /// The received block these headers still are, if no change made them fields.
    var receivedBlock: ReceivedHeaderBlock? {
        if case .received(let block) = storage { return block }
        return nil
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool { lhs.fields == rhs.fields }
    public func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value for `name`, compared case-insensitively; setting replaces every field of that name.
    public subscript(name: String) -> String? {
        get {
            if case .received(let block) = storage { return block.values(named: name, limit: 1).first }
            return fields.first { HTTPSyntax.namesEqual($0.name, name) }?.value
        }
        set {
            if let newValue { replaceOrAdd(name: name, value: newValue) } else { remove(name: name) }
        }
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        if case .received(let block) = storage { return block.values(named: name) }
        return fields.lazy.filter { HTTPSyntax.namesEqual($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        if case .received(let block) = storage { return !block.values(named: name, limit: 1).isEmpty }
        return fields.contains { HTTPSyntax.namesEqual($0.name, name) }
    }

    /// Appends a field, keeping any earlier one with the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces the first field named `name` and removes the others, or appends one.
    /// Continues the last field's value (a folded header line); nothing when there is no field.
    mutating func appendToLastValue(_ continuation: String) {
        guard !fields.isEmpty else { return }
        fields[fields.count - 1].value += fields[fields.count - 1].value.isEmpty ? continuation : " " + continuation
    }

    public mutating func replaceOrAdd(name: String, value: String) {
        if let index = fields.firstIndex(where: { HTTPSyntax.namesEqual($0.name, name) }) {
            fields[index].value = value
            var next = index + 1
            while next < fields.count {
                if HTTPSyntax.namesEqual(fields[next].name, name) { fields.remove(at: next) } else { next += 1 }
            }
        } else {
            add(name: name, value: value)
        }
    }

    public mutating func remove(name: String) {
        fields.removeAll { HTTPSyntax.namesEqual($0.name, name) }
    }

    public var count: Int {
        switch storage {
        case .fields(let fields): fields.count
        case .received(let block): block.count
        }
    }

    public var isEmpty: Bool { count == 0 }

    /// The first field that cannot be sent, if any.
    func firstInvalidField() -> Field? {
        fields.first { field in
            field.name.isEmpty || !HTTPSyntax.all(field.name, are: HTTPSyntax.isTokenByte)
                || !HTTPSyntax.all(field.value, are: HTTPSyntax.isFieldValueByte)
        }
    }
}

extension HTTPHeaders: Sequence {
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

extension HTTPHeaders: CustomStringConvertible {
    /// The fields one per line, with credentials replaced by `_snip_`.
    public var description: String {
        fields.map { "\($0.name): \(Redaction.headerValue(name: $0.name, value: $0.value))" }
            .joined(separator: "\n")
    }
}
