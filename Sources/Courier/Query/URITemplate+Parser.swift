extension URITemplate {
    /// A template's pieces: literal text, already encoded for a URI, and expressions.
    enum Part: Sendable, Hashable {
        case literal(String)
        case expression(Operator, [VariableSpec])
    }

    /// One variable of an expression, with its modifier (RFC 6570 section 2.4).
    struct VariableSpec: Sendable, Hashable {
        enum Modifier: Sendable, Hashable {
            case none
            /// `{var:3}`: at most this many characters of a string value.
            case prefix(Int)
            /// `{var*}`: each member of a list or associative array on its own.
            case explode
        }

        let name: String
        let modifier: Modifier
    }

    /// An expression's operator and what it means for expansion (RFC 6570 appendix A's table).
    enum Operator: Character, Sendable, Hashable {
        case simple = "\0", reserved = "+", fragment = "#", label = ".", path = "/", parameter = ";",
             query = "?", continuation = "&"

        var first: String {
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
        /// What follows a named variable whose value is empty.
        var ifEmpty: String { self == .parameter ? "" : "=" }
    }

    /// Reads `template` by RFC 6570's grammar (section 2); a template it does not allow is an
    /// `invalidTemplate` error naming the offset, in Unicode scalars, where reading stopped.
    static func parse(_ template: String) throws(QueryError) -> [Part] {
        var parser = Parser(scalars: Array(template.unicodeScalars))
        return try parser.parse()
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0

        mutating func parse() throws(QueryError) -> [Part] {
            var parts: [Part] = []
            var literal = ""
            while index < scalars.count {
                let scalar = scalars[index]
                if scalar == "{" {
                    if !literal.isEmpty {
                        parts.append(.literal(literal))
                        literal = ""
                    }
                    parts.append(try expression())
                } else {
                    try appendLiteral(scalar, to: &literal)
                }
            }
            if !literal.isEmpty { parts.append(.literal(literal)) }
            return parts
        }

        /// A literal character as the expansion writes it (section 3.1): a character a URI
        /// allows as it is, anything else the template may hold as its UTF-8 in `%XX` triplets.
        private mutating func appendLiteral(_ scalar: Unicode.Scalar, to literal: inout String) throws(QueryError) {
            if scalar == "%" {
                guard let triplet = pctEncoded() else { throw invalid("a \"%\" not followed by two hex digits") }
                literal += triplet
                return
            }
            if scalar.isASCII {
                let byte = UInt8(truncatingIfNeeded: scalar.value) // ASCII: exact
                guard URITemplate.isUnreserved(byte) || URITemplate.isReserved(byte) else {
                    throw invalid(scalar == "}" ? "a \"}\" outside an expression" : "\(Self.describe(scalar)), which a template may not hold")
                }
                literal.unicodeScalars.append(scalar)
            } else {
                guard Self.isUCSCharOrPrivate(scalar) else { throw invalid("\(Self.describe(scalar)), which a template may not hold") }
                literal += URITemplate.percentEncode(String(scalar), keep: { _ in false })
            }
            index += 1
        }

        /// `{` operator? varspec *( "," varspec ) `}`, with `index` at the `{`.
        private mutating func expression() throws(QueryError) -> Part {
            index += 1
            var op = Operator.simple
            if index < scalars.count {
                let character = Character(scalars[index])
                if let parsed = Operator(rawValue: character), parsed != .simple {
                    op = parsed
                    index += 1
                } else if "=,!@|".contains(character) {
                    throw invalid("the operator \"\(character)\", which RFC 6570 reserves for future extensions")
                }
            }
            var specs: [VariableSpec] = []
            while true {
                specs.append(try variableSpec())
                guard index < scalars.count else { throw invalid("an expression without its closing \"}\"") }
                if scalars[index] == "}" {
                    index += 1
                    return .expression(op, specs)
                }
                guard scalars[index] == "," else { throw invalid("\(Self.describe(scalars[index])) in an expression") }
                index += 1
            }
        }

        /// varname [ ":" max-length / "*" ]; varname is varchar *( ["."] varchar ).
        private mutating func variableSpec() throws(QueryError) -> VariableSpec {
            var name = ""
            var lastWasDot = true // a name may not start with a dot
            while index < scalars.count {
                let scalar = scalars[index]
                if scalar == "." {
                    guard !lastWasDot else { throw invalid("a variable name with an empty part between dots") }
                    name += "."
                    lastWasDot = true
                    index += 1
                } else if scalar == "%" {
                    guard let triplet = pctEncoded() else { throw invalid("a \"%\" not followed by two hex digits") }
                    name += triplet
                    lastWasDot = false
                } else if scalar.isASCII, Self.isVarchar(UInt8(truncatingIfNeeded: scalar.value)) {
                    name.unicodeScalars.append(scalar)
                    lastWasDot = false
                    index += 1
                } else {
                    break
                }
            }
            guard !name.isEmpty else {
                throw invalid(index < scalars.count ? "\(Self.describe(scalars[index])) where a variable name belongs" : "an expression without its closing \"}\"")
            }
            guard !lastWasDot else { throw invalid("a variable name that ends with a dot") }
            guard index < scalars.count else { return VariableSpec(name: name, modifier: .none) }
            if scalars[index] == "*" {
                index += 1
                return VariableSpec(name: name, modifier: .explode)
            }
            guard scalars[index] == ":" else { return VariableSpec(name: name, modifier: .none) }
            index += 1
            // max-length: %x31-39 0*3DIGIT, so 1 to 9999 with no leading zero.
            var digits = 0
            var length = 0
            while index < scalars.count, let digit = Self.digit(scalars[index]) {
                guard digits > 0 || digit > 0 else { throw invalid("a prefix length with a leading zero") }
                guard digits < 4 else { throw invalid("a prefix length above 9999") }
                length = length * 10 + digit
                digits += 1
                index += 1
            }
            guard digits > 0 else { throw invalid("a \":\" without a prefix length after it") }
            return VariableSpec(name: name, modifier: .prefix(length))
        }

        /// The `%XX` at `index`, moving past it; nil when it is not one.
        private mutating func pctEncoded() -> String? {
            guard index + 2 < scalars.count, URITemplate.isHexDigit(scalars[index + 1]),
                  URITemplate.isHexDigit(scalars[index + 2]) else { return nil }
            defer { index += 3 }
            return String(String.UnicodeScalarView(scalars[index...index + 2]))
        }

        private func invalid(_ what: String) -> QueryError {
            QueryError(code: .invalidTemplate, message: "not an RFC 6570 URI template: \(what) at offset \(index)")
        }

        private static func isVarchar(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }

        private static func digit(_ scalar: Unicode.Scalar) -> Int? {
            ("0"..."9").contains(scalar) ? Int(scalar.value) - 48 : nil
        }

        /// RFC 6570's ucschar and iprivate: the non-ASCII characters a template may hold.
        private static func isUCSCharOrPrivate(_ scalar: Unicode.Scalar) -> Bool {
            let value = scalar.value
            switch value {
            case 0xA0...0xD7FF, 0xE000...0xFDCF, 0xFDF0...0xFFEF: return true
            default:
                // The supplementary planes, each without its last two code points (U+xFFFE, U+xFFFF),
                // and without plane 14's first 4,096 (the tag characters).
                return value >= 0x10000 && value & 0xFFFF <= 0xFFFD && !(0xE0000...0xE0FFF).contains(value)
            }
        }

        private static func describe(_ scalar: Unicode.Scalar) -> String {
            scalar.properties.generalCategory == .control || scalar == " "
                ? "U+\(String(scalar.value, radix: 16, uppercase: true))" : "\"\(scalar)\""
        }
    }
}
