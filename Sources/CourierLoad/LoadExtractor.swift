import Courier
import Foundation

/// Where a flow step finds a value in its response, for later steps' `{{name}}`:
///
/// ```text
/// json:$.id            the value at a JSON path (a string, number or boolean)
/// header:location      a header's first value, the name in any case
/// regex:id=(\d+)       the first capture group of the first match in the body (or the whole match)
/// ```
struct LoadExtractor: Sendable, Hashable {
    enum Source: Sendable, Hashable {
        case json([LoadCheck.PathStep])
        case header(String)
        case regex(String)
    }

    let expression: String
    let source: Source
    private let pattern: LoadPattern?

    /// - Parameter context: where it was given (`flow "notes" step "create" extract id`), for errors.
    init(_ expression: String, context: String) throws {
        func fail(_ why: String) -> LoadError { .invalidScenario("\(context): \(expression): \(why)") }
        self.expression = expression
        if expression.hasPrefix("json:") {
            let text = expression.dropFirst(5)
            let (steps, length) = try LoadCheck.parsePath(text, fail: fail)
            guard length == text.count else { throw fail("the JSON path ends at \(text.prefix(length)); what follows is not part of one") }
            guard !steps.isEmpty else { throw fail("$ alone is the whole body; name a value in it, as $.id") }
            source = .json(steps)
            pattern = nil
        } else if expression.hasPrefix("header:") {
            let name = expression.dropFirst(7)
            guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0 == ":" }) else { throw fail("expected header:NAME, as header:location") }
            source = .header(name.lowercased())
            pattern = nil
        } else if expression.hasPrefix("regex:") {
            let text = String(expression.dropFirst(6))
            guard !text.isEmpty else { throw fail("the regular expression is empty") }
            do { pattern = try LoadPattern(text) } catch { throw fail("not a regular expression: \(error)") }
            source = .regex(text)
        } else {
            throw fail("expected json:PATH, header:NAME or regex:PATTERN")
        }
    }

    /// The value in a response; nil when it is not there (or is an array, an object or null).
    func value(headers: HTTPHeaders, body: Data) -> String? {
        switch source {
        case .json(let steps):
            switch JSONPathScanner.value(at: steps, in: body) {
            case .string(let text): return text
            case .number(let number): return number.description
            case .bool(let flag): return flag ? "true" : "false"
            case .null, .array, .object, nil: return nil
            }
        case .header(let name):
            return headers[name]
        case .regex:
            return pattern?.firstCapture(in: String(decoding: body, as: UTF8.self))
        }
    }

    static func == (lhs: LoadExtractor, rhs: LoadExtractor) -> Bool { lhs.expression == rhs.expression }
    func hash(into hasher: inout Hasher) { hasher.combine(expression) }
}
