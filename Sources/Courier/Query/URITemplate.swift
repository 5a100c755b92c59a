/// An RFC 6570 URI template, levels 1 to 3: `{var}`, `{+var}`, `{#var}`, `{.var}`, `{/var}`,
/// `{;var}`, `{?var}`, `{&var}`, each with one or more comma-separated variables.
///
/// Values are percent-encoded as the operator requires, so `{id}` with `../x` or `a/b` stays
/// one path segment (`..%2Fx`, `a%2Fb`). Beyond the RFC, a value that *is* a dot segment
/// (`.` or `..`) is encoded too (`%2E%2E`): otherwise the URL's path would be resolved upward.
/// `{+path}` keeps slashes by design, but still encodes any `.` or `..` segment.
public struct URITemplate: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    enum Part: Sendable, Hashable {
        case literal(String)
        case expression(Operator, [String])
    }

    enum Operator: Character, Sendable, Hashable {
        case simple = "\0", reserved = "+", fragment = "#", label = ".", path = "/", parameter = ";",
             query = "?", continuation = "&"

        var prefix: String {
            switch self {
            case .simple, .reserved: ""
            default: String(rawValue)
            }
        }

        var separator: String {
            switch self {
            case .simple, .reserved, .fragment: ","
            case .query, .continuation: "&"
            default: String(rawValue)
            }
        }

        var isNamed: Bool { self == .parameter || self == .query || self == .continuation }
        var allowsReserved: Bool { self == .reserved || self == .fragment }
        var emptyNamedSuffix: String { self == .parameter ? "" : "=" }
    }

    public let template: String
    let parts: [Part]

    public init(_ template: String) {
        self.template = template
        parts = Self.parse(template)
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public var description: String { template }

    /// The names of every variable, in order.
    public var variableNames: [String] {
        parts.flatMap { part -> [String] in
            if case .expression(_, let names) = part { return names }
            return []
        }
    }

    /// Expands the template. With `requireAll`, a missing variable is an error (a path needs
    /// every parameter); otherwise it is left out, as the RFC says.
    public func expand(_ variables: [String: String], requireAll: Bool = false) throws(QueryError) -> String {
        var result = ""
        for part in parts {
            switch part {
            case .literal(let text):
                result += text
            case .expression(let op, let names):
                var expanded: [String] = []
                for name in names {
                    guard let value = variables[name] else {
                        if requireAll {
                            throw QueryError(code: .missingParameter, message: "path parameter \(name.debugDescription) is missing")
                        }
                        continue
                    }
                    let encoded = Self.encode(value, allowReserved: op.allowsReserved)
                    if op.isNamed {
                        expanded.append(value.isEmpty ? name + op.emptyNamedSuffix : "\(name)=\(encoded)")
                    } else {
                        expanded.append(encoded)
                    }
                }
                if !expanded.isEmpty { result += op.prefix + expanded.joined(separator: op.separator) }
            }
        }
        return result
    }

    private static func parse(_ template: String) -> [Part] {
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            var body = rest[rest.index(after: open)..<close]
            var op = Operator.simple
            if let first = body.first, let parsed = Operator(rawValue: first), parsed != .simple {
                op = parsed
                body = body.dropFirst()
            }
            if !literal.isEmpty {
                parts.append(.literal(literal))
                literal = ""
            }
            parts.append(.expression(op, body.split(separator: ",").map { String($0) }))
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { parts.append(.literal(literal)) }
        return parts
    }

    /// Percent-encodes `value`: unreserved characters pass; with `allowReserved`, reserved
    /// characters and existing `%XX` triplets pass too. Dot segments are always encoded.
    static func encode(_ value: String, allowReserved: Bool) -> String {
        if !allowReserved {
            if value == "." { return "%2E" }
            if value == ".." { return "%2E%2E" }
            return percentEncode(value, keep: isUnreserved)
        }
        let segments = value.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            if segment == "." { return "%2E" }
            if segment == ".." { return "%2E%2E" }
            return percentEncode(String(segment), keep: { isUnreserved($0) || isReserved($0) }, keepTriplets: true)
        }
        return segments.joined(separator: "/")
    }

    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    static func isReserved(_ byte: UInt8) -> Bool {
        ":/?#[]@!$&'()*+,;=".utf8.contains(byte)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    package static func percentEncode(_ value: String, keep: (UInt8) -> Bool, keepTriplets: Bool = false) -> String {
        let bytes = Array(value.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if keepTriplets, byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) {
                output.append(contentsOf: bytes[index...index + 2])
                index += 3
                continue
            }
            if keep(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            }
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
