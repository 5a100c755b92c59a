import Courier
import Foundation

/// A JSON list of weighted requests, each counted as an endpoint of its own in the results:
///
/// ```json
/// [{"name": "list",   "url": "http://127.0.0.1:8080/notes/v1/notes", "weight": 3},
///  {"name": "get",    "url": "http://127.0.0.1:8080/notes/v1/notes/1", "headers": {"Accept": "application/json"}},
///  {"name": "create", "method": "POST", "url": "http://127.0.0.1:8080/notes/v1/notes",
///   "body": "{\"title\":\"x\"}", "weight": 0.5, "checks": ["status==200", "json:$.id"]}]
/// ```
///
/// `method` defaults to GET, `weight` to 1 and `name` to the method and path. `checks` are
/// ``LoadCheck``s on this request's responses, beside those every request gets.
///
/// An entry with `flow` instead of `url` is a user flow: its steps run in order, one after
/// another, by the same worker, and each step's figures are kept under `flow/step`. A step may
/// `extract` values from its response for later steps' `{{name}}` placeholders, and `think`
/// (a duration) before the next step:
///
/// ```json
/// {"name": "notes", "weight": 1, "flow": [
///   {"name": "create", "method": "POST", "url": "http://127.0.0.1:8080/notes/v1/notes",
///    "body": "{\"title\":\"{{uuid}}\"}", "extract": {"id": "json:$.id"}, "checks": ["status==200"], "think": "100ms"},
///   {"name": "read", "url": "http://127.0.0.1:8080/notes/v1/notes/{{id}}"},
///   {"name": "delete", "method": "DELETE", "url": "http://127.0.0.1:8080/notes/v1/notes/{{id}}"}]}
/// ```
///
/// In the open model each arrival starts one run of the flow, and `--requests` counts runs of it.
/// When a value to extract is not in the response, the flow's later steps are not sent: the
/// next one is counted as failed with the kind `missingValue`.
public struct Scenario: Codable, Sendable, Equatable {
    /// One kind of request in the mix.
    public struct Request: Codable, Sendable, Equatable {
        public var name: String?
        public var method: String?
        public var url: String
        public var headers: [String: String]?
        public var body: String?
        public var weight: Double?
        /// ``LoadCheck`` expressions on this request's responses.
        public var checks: [String]?
        /// In a flow's step: values to take from the response, by the name later steps use
        /// (`{"id": "json:$.id"}`; also `header:NAME` and `regex:PATTERN`).
        public var extract: [String: String]?
        /// In a flow's step: how long the user waits after it, before the next step (`500ms`, `2s`).
        public var think: String?

        public init(name: String? = nil, method: String? = nil, url: String, headers: [String: String]? = nil,
                    body: String? = nil, weight: Double? = nil, checks: [String]? = nil,
                    extract: [String: String]? = nil, think: String? = nil) {
            self.name = name
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.weight = weight
            self.checks = checks
            self.extract = extract
            self.think = think
        }
    }

    /// Steps one user takes in order (see the type's description).
    public struct Flow: Codable, Sendable, Equatable {
        public var name: String
        public var weight: Double?
        public var steps: [Request]

        public init(name: String, weight: Double? = nil, steps: [Request]) {
            self.name = name
            self.weight = weight
            self.steps = steps
        }
    }

    public var requests: [Request]
    /// The flows of the mix, picked by weight beside ``requests``.
    public var flows: [Flow] = []

    public init(requests: [Request], flows: [Flow] = []) {
        self.requests = requests
        self.flows = flows
    }

    /// One entry of the JSON list: a request, or a flow when `flow` is there.
    private struct Item: Decodable {
        var name: String?
        var method: String?
        var url: String?
        var headers: [String: String]?
        var body: String?
        var weight: Double?
        var checks: [String]?
        var extract: [String: String]?
        var think: String?
        var flow: [Request]?
    }

    /// Reads a scenario file.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw LoadError.invalidScenario("cannot read \(url.path): \(error.localizedDescription)")
        }
        do {
            try self.init(json: data)
        } catch LoadError.invalidScenario(let why) {
            throw LoadError.invalidScenario("\(url.path): \(why)")
        }
    }

    /// Where a JSON text went wrong, and what was expected: a syntax error's line and column
    /// (from Courier's own parser, which reports the byte where it stopped), else the entry and
    /// field whose value is not of its type.
    static func explain(_ error: any Error, in json: Data) -> String {
        if let syntax = Self.syntaxError(json) {
            let before = json.prefix(min(syntax.offset, json.count))
            let line = before.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
            let column = before.count - (before.lastIndex(of: 10).map { $0 - before.startIndex + 1 } ?? 0) + 1
            return "line \(line), column \(column): \(syntax.message)"
        }
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func place(_ path: [any CodingKey]) -> String {
            let names = path.map { key in key.intValue.map { "entry \($0 + 1)" } ?? key.stringValue }
            return names.isEmpty ? "the file" : names.joined(separator: ", ")
        }
        switch decoding {
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(place(context.codingPath)): expected \(Self.describe(type))"
        case .keyNotFound(let key, let context):
            return "\(place(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            return "\(place(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(decoding)"
        }
    }

    private static func syntaxError(_ json: Data) -> JSONParsingError? {
        do { _ = try JSONValue(parsing: json); return nil } catch { return error }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type, is Int.Type: "a number"
        case is Bool.Type: "true or false"
        case is [Any].Type: "a list"
        default: "\(type)".hasPrefix("Array") ? "a list" : "\(type)".hasPrefix("Dictionary") ? "an object" : "\(type)"
        }
    }

    /// Parses a scenario from its JSON text.
    public init(json: Data) throws {
        let items: [Item]
        do {
            items = try JSONDecoder().decode([Item].self, from: json)
        } catch {
            throw LoadError.invalidScenario("\(Self.explain(error, in: json)); a scenario is a JSON list of {name, method, url, headers, body, weight, checks} or {name, weight, flow: [steps]}")
        }
        requests = []
        for (position, item) in items.enumerated() {
            if let steps = item.flow {
                guard item.url == nil, item.method == nil, item.body == nil, item.headers == nil, item.extract == nil else {
                    throw LoadError.invalidScenario("entry \(position + 1) has both a flow and a request of its own: put the request in the flow as a step")
                }
                guard let name = item.name, !name.isEmpty else { throw LoadError.invalidScenario("flow \(position + 1) has no name") }
                guard !steps.isEmpty else { throw LoadError.invalidScenario("flow \"\(name)\" has no steps") }
                flows.append(Flow(name: name, weight: item.weight, steps: steps))
            } else {
                guard let url = item.url else { throw LoadError.invalidScenario("entry \(position + 1) has neither a url nor a flow") }
                guard item.extract == nil, item.think == nil else {
                    throw LoadError.invalidScenario("\(item.name ?? Redaction.url(url)): extract and think belong to a flow's steps")
                }
                requests.append(Request(name: item.name, method: item.method, url: url, headers: item.headers, body: item.body,
                                        weight: item.weight, checks: item.checks))
            }
        }
        guard !requests.isEmpty || !flows.isEmpty else { throw LoadError.invalidScenario("the scenario has no requests") }
        let weighted = requests.map { ($0.weight, Redaction.url($0.url)) } + flows.map { ($0.weight, "flow \"\($0.name)\"") }
        for (weight, name) in weighted {
            if let weight, !(weight > 0 && weight.isFinite) {
                throw LoadError.invalidScenario("weight \(weight) of \(name) is not a positive number")
            }
        }
        for request in requests + flows.flatMap(\.steps) {
            for check in request.checks ?? [] {
                do { _ = try LoadCheck(check) } catch let error as LoadError {
                    throw LoadError.invalidScenario("\(request.name ?? Redaction.url(request.url)): \(error.message)")
                }
            }
        }
    }
}
