import Courier
import Foundation

/// A condition on each response, counted per check as k6 counts checks: a failed check is a
/// figure of the run, not a failed request.
///
/// ```text
/// status==200            status<400             status~^2
/// header:content-type~json                      header:etag       (present)
/// body~"ok"              body!~error
/// json:$.items.length>0  json:$.kind=="tasks#task"               json:$.done==false
/// ```
///
/// Subjects: `status`; `header:NAME` (its first value, the name in any case); `body` (as UTF-8);
/// `json:PATH`, where PATH is `$` followed by `.name`, `["name"]` or `[index]` steps, and may end
/// in `.length` (of an array, object or string). Operators: `==` `!=` `<` `<=` `>` `>=` (numbers
/// compare as numbers), `~` and `!~` (a regular expression found, or not). A header or JSON
/// subject without an operator checks that it is there. A string operand may be quoted.
public struct LoadCheck: Sendable, Hashable, CustomStringConvertible {
    enum Subject: Hashable {
        case status
        case header(String)
        case body
        case json([PathStep])
    }

    enum PathStep: Hashable {
        case member(String)
        case index(Int)
        case length
    }

    enum Operator: String, CaseIterable {
        // Two-character operators first, so `<=` is not read as `<`.
        case equal = "==", notEqual = "!=", notMatching = "!~", lessOrEqual = "<=", greaterOrEqual = ">="
        case less = "<", greater = ">", matching = "~"
    }

    /// The text it was parsed from, which names it in results.
    public let expression: String
    let subject: Subject
    let comparison: Operator?
    let operand: String
    private let pattern: LoadPattern?

    public var description: String { expression }

    /// - Throws: ``LoadError/invalidArgument(_:)`` saying what is wrong with `expression`.
    public init(_ expression: String) throws {
        func fail(_ why: String) -> LoadError { .invalidArgument("check \(expression): \(why)") }
        self.expression = expression
        let text = expression.trimmingCharacters(in: .whitespaces)
        var rest: Substring
        if text.hasPrefix("status") {
            subject = .status
            rest = text.dropFirst(6)
        } else if text.hasPrefix("body") {
            subject = .body
            rest = text.dropFirst(4)
        } else if text.hasPrefix("header:") {
            let name = text.dropFirst(7).prefix { !"=!<>~".contains($0) }
            guard !name.isEmpty, !name.contains(where: \.isWhitespace) else { throw fail("expected header:NAME, as header:content-type~json") }
            subject = .header(String(name).lowercased())
            rest = text.dropFirst(7 + name.count)
        } else if text.hasPrefix("json:") {
            let (steps, length) = try Self.parsePath(text.dropFirst(5), fail: fail)
            subject = .json(steps)
            rest = text.dropFirst(5 + length)
        } else {
            throw fail("expected status, header:NAME, body or json:PATH before the operator")
        }
        rest = rest.drop(while: \.isWhitespace)
        if rest.isEmpty {
            switch subject {
            case .header, .json: (comparison, operand, pattern) = (nil, "", nil)
            case .status, .body: throw fail("expected an operator (== != < <= > >= ~ !~) and a value")
            }
            return
        }
        guard let comparison = Operator.allCases.first(where: { rest.hasPrefix($0.rawValue) }) else {
            throw fail("expected an operator (== != < <= > >= ~ !~) after the subject")
        }
        var value = rest.dropFirst(comparison.rawValue.count).trimmingCharacters(in: .whitespaces)
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
        guard !value.isEmpty || comparison == .equal || comparison == .notEqual else { throw fail("the value is empty") }
        if [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(comparison), Double(value) == nil {
            throw fail("\(comparison.rawValue) compares numbers; \(value) is not one")
        }
        if case .status = subject, [.equal, .notEqual].contains(comparison), Int(value) == nil {
            throw fail("\(value) is not a status code")
        }
        self.comparison = comparison
        operand = value
        if comparison == .matching || comparison == .notMatching {
            do { pattern = try LoadPattern(value) } catch { throw fail("\(value) is not a regular expression: \(error)") }
        } else {
            pattern = nil
        }
    }

    /// `$.a["b"][0].length` → its steps, and how many characters the path took.
    static func parsePath(_ text: Substring, fail: (String) -> LoadError) throws -> ([PathStep], Int) {
        guard text.hasPrefix("$") else { throw fail("a JSON path starts at $, as $.items[0].id") }
        var steps: [PathStep] = []
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            if text[index] == "." {
                let name = text[text.index(after: index)...].prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
                guard !name.isEmpty else { throw fail("a . in the JSON path is followed by no name") }
                steps.append(name == "length" ? .length : .member(String(name)))
                index = name.endIndex
            } else if text[index] == "[" {
                guard let close = text[index...].firstIndex(of: "]") else { throw fail("a [ in the JSON path is not closed") }
                let inside = text[text.index(after: index)..<close]
                if let number = Int(inside), number >= 0 {
                    steps.append(.index(number))
                } else if inside.count >= 2, let quote = inside.first, quote == "\"" || quote == "'", inside.last == quote {
                    steps.append(.member(String(inside.dropFirst().dropLast())))
                } else {
                    throw fail("[\(inside)] in the JSON path is neither an index nor a quoted name")
                }
                index = text.index(after: close)
            } else {
                break
            }
        }
        if let length = steps.firstIndex(of: .length), length != steps.count - 1 { throw fail(".length ends a JSON path") }
        return (steps, text.distance(from: text.startIndex, to: index))
    }

    /// Whether `response` meets the condition.
    func passes(status: Int, headers: HTTPHeaders, body: Data) -> Bool {
        switch subject {
        case .status:
            return compare(text: String(status), number: Double(status))
        case .header(let name):
            guard let value = headers[name] else { return comparison == .notEqual || comparison == .notMatching }
            return compare(text: value, number: Double(value))
        case .body:
            // A literal is looked for in the bytes, without a String of the whole body.
            if let literal = pattern?.literal {
                let found = body.withUnsafeBytes { bytes in literal.withUnsafeBytes { LoadPattern.find($0, in: bytes) } }
                return found == (comparison == .matching)
            }
            return compare(text: String(decoding: body, as: UTF8.self), number: nil)
        case .json(let steps):
            guard let value = JSONPathScanner.value(at: steps, in: body) else {
                return comparison == .notEqual || comparison == .notMatching
            }
            switch value {
            case .string(let text): return compare(text: text, number: Double(text))
            case .number(let number): return compare(text: number.description, number: number.doubleValue)
            case .bool(let flag): return compare(text: flag ? "true" : "false", number: nil)
            case .null: return compare(text: "null", number: nil)
            case .array, .object: return comparison == nil || comparison == .notEqual
            }
        }
    }

    private func compare(text: String, number: Double?) -> Bool {
        guard let comparison else { return true }
        let limit = Double(operand)
        switch comparison {
        case .equal: return number != nil && limit != nil ? number == limit : text == operand
        case .notEqual: return number != nil && limit != nil ? number != limit : text != operand
        case .less: return number.map { $0 < limit! } ?? false
        case .lessOrEqual: return number.map { $0 <= limit! } ?? false
        case .greater: return number.map { $0 > limit! } ?? false
        case .greaterOrEqual: return number.map { $0 >= limit! } ?? false
        case .matching: return pattern?.isFound(in: text) ?? false
        case .notMatching: return !(pattern?.isFound(in: text) ?? false)
        }
    }

    public static func == (lhs: LoadCheck, rhs: LoadCheck) -> Bool { lhs.expression == rhs.expression }
    public func hash(into hasher: inout Hasher) { hasher.combine(expression) }
}

/// A regular expression, compiled once and shared by every worker (NSRegularExpression is
/// thread-safe for matching; Swift's `Regex` is not `Sendable`). Most checks look for plain
/// text (`~json`, `~"ok"`): that is a substring search, several times cheaper than the engine.
struct LoadPattern: @unchecked Sendable {
    private let expression: NSRegularExpression
    /// The pattern's bytes when it has no character special to regular expressions.
    let literal: Data?

    /// Whether `needle` occurs in `haystack`: memchr to each candidate first byte, memcmp for the
    /// rest (the generic `firstRange(of:)` cost as much as the request in a profile of checked runs).
    static func find(_ needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let first = needle.first else { return true }
        guard let base = haystack.baseAddress, let pattern = needle.baseAddress, haystack.count >= needle.count else { return false }
        var offset = 0
        let last = haystack.count - needle.count
        while offset <= last, let hit = memchr(base + offset, Int32(first), last - offset + 1) {
            let position = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + position, pattern, needle.count) == 0 { return true }
            offset = position + 1
        }
        return false
    }

    init(_ pattern: String) throws {
        expression = try NSRegularExpression(pattern: pattern)
        literal = pattern.contains(where: { "\\^$.|?*+()[]{}".contains($0) }) ? nil : Data(pattern.utf8)
    }

    /// The first capture group of the first match in `text`, or the whole match without a group.
    func firstCapture(in text: String) -> String? {
        guard let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        let range = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
        return Range(range, in: text).map { String(text[$0]) }
    }

    func isFound(in text: String) -> Bool {
        if let literal {
            var text = text
            return text.withUTF8 { bytes in literal.withUnsafeBytes { Self.find($0, in: UnsafeRawBufferPointer(bytes)) } }
        }
        return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}

/// How often one check held over a run.
public struct CheckResult: Codable, Sendable, Equatable {
    public var expression: String
    public var passes: Int
    public var fails: Int

    public init(expression: String, passes: Int = 0, fails: Int = 0) {
        self.expression = expression
        self.passes = passes
        self.fails = fails
    }

    /// Passes as a fraction of evaluations (0…1); 1 when never evaluated.
    public var passRate: Double { passes + fails > 0 ? Double(passes) / Double(passes + fails) : 1 }
}
