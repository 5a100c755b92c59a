extension URITemplate {
    /// RFC 6570 appendix A's expansion, with values looked up by name.
    func expand(requireAll: Bool, _ lookup: (String) -> Value?) throws(QueryError) -> String {
        let parts = try parsed.get()
        var result = ""
        var expanded: [Range<Int>] = [] // where expressions wrote, in UTF-8 offsets
        for part in parts {
            switch part {
            case .literal(let text):
                result += text
            case .expression(let op, let specs):
                let start = result.utf8.count
                defer { if result.utf8.count > start { expanded.append(start..<result.utf8.count) } }
                var first = true
                for spec in specs {
                    guard let value = lookup(spec.name), !value.isUndefined else {
                        if requireAll {
                            throw QueryError(code: .missingParameter, message: "path parameter \(spec.name.debugDescription) is missing")
                        }
                        continue
                    }
                    result += first ? op.first : op.separator
                    first = false
                    try Self.append(value, of: spec, with: op, to: &result)
                }
            }
        }
        return Self.encodingDotSegments(of: result, expanded: expanded)
    }

    /// `result` with each path segment that is `.` or `..` and that an expression wrote any of
    /// written as `%2E` or `%2E%2E`. Beyond the RFC, on purpose: a value must not move the path
    /// upward (`notes/{id}` with `..`, `o/{+name}` with `../admin`), which the RFC's encoding
    /// allows, as `.` is unreserved. A dot segment written by the template itself is its author's.
    static func encodingDotSegments(of result: String, expanded: [Range<Int>]) -> String {
        // Most expansions write no dot at all: then there is nothing to look for.
        let wroteADot = result.utf8.withContiguousStorageIfAvailable { bytes in
            expanded.contains { bytes[$0].contains(UInt8(ascii: ".")) }
        } ?? true
        guard wroteADot else { return result }
        let bytes = Array(result.utf8)
        // The path ends where a URL parser would end it.
        let pathEnd = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        var dotSegments: [Range<Int>] = []
        var segmentStart = 0
        for index in 0...pathEnd where index == pathEnd || bytes[index] == UInt8(ascii: "/") {
            let segment = segmentStart..<index
            if (segment.count == 1 || segment.count == 2), bytes[segment].allSatisfy({ $0 == UInt8(ascii: ".") }),
               expanded.contains(where: { $0.overlaps(segment) }) {
                dotSegments.append(segment)
            }
            segmentStart = index + 1
        }
        guard !dotSegments.isEmpty else { return result }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 4 * dotSegments.count)
        var copied = 0
        for segment in dotSegments {
            output.append(contentsOf: bytes[copied..<segment.lowerBound])
            for _ in segment { output.append(contentsOf: "%2E".utf8) }
            copied = segment.upperBound
        }
        output.append(contentsOf: bytes[copied...])
        return String(decoding: output, as: UTF8.self)
    }

    private static func append(_ value: Value, of spec: VariableSpec, with op: Operator, to result: inout String) throws(QueryError) {
        let reserved = op.allowsReserved
        switch (value, spec.modifier) {
        case (.string(let string), _):
            if op.isNamed {
                result += spec.name
                if string.isEmpty {
                    result += op.ifEmpty
                    return
                }
                result += "="
            }
            if case .prefix(let length) = spec.modifier {
                result += encode(prefix(string, length, allowReserved: reserved), allowReserved: reserved)
            } else {
                result += encode(string, allowReserved: reserved)
            }
        case (.list, .prefix), (.pairs, .prefix):
            throw QueryError(code: .invalidTemplate,
                             message: "the prefix modifier of \(spec.name.debugDescription) applies to strings, not to a list or an associative array")
        case (.list(let items), .explode):
            result += items.map { item in
                op.isNamed ? named(spec.name, item, ifEmpty: op.ifEmpty, reserved: reserved) : encode(item, allowReserved: reserved)
            }.joined(separator: op.separator)
        case (.pairs(let pairs), .explode):
            result += pairs.map { pair in
                named(encode(pair.name, allowReserved: reserved), pair.value, ifEmpty: op.isNamed ? op.ifEmpty : "=", reserved: reserved)
            }.joined(separator: op.separator)
        case (.list(let items), .none):
            if op.isNamed { result += spec.name + "=" }
            result += items.map { encode($0, allowReserved: reserved) }.joined(separator: ",")
        case (.pairs(let pairs), .none):
            if op.isNamed { result += spec.name + "=" }
            result += pairs.map { encode($0.name, allowReserved: reserved) + "," + encode($0.value, allowReserved: reserved) }
                .joined(separator: ",")
        }
    }

    /// `name=value`, or `name` and `ifEmpty` for an empty value.
    private static func named(_ name: String, _ value: String, ifEmpty: String, reserved: Bool) -> String {
        value.isEmpty ? name + ifEmpty : name + "=" + encode(value, allowReserved: reserved)
    }
}
