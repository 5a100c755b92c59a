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

        public init(name: String? = nil, method: String? = nil, url: String, headers: [String: String]? = nil,
                    body: String? = nil, weight: Double? = nil, checks: [String]? = nil) {
            self.name = name
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.weight = weight
            self.checks = checks
        }
    }

    public var requests: [Request]

    public init(requests: [Request]) {
        self.requests = requests
    }

    /// Reads a scenario file.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw LoadError.invalidScenario("cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(json: data)
    }

    /// Parses a scenario from its JSON text.
    public init(json: Data) throws {
        do {
            requests = try JSONDecoder().decode([Request].self, from: json)
        } catch {
            throw LoadError.invalidScenario("expected a JSON list of {name, method, url, headers, body, weight, checks}: \(error)")
        }
        guard !requests.isEmpty else { throw LoadError.invalidScenario("the scenario has no requests") }
        for request in requests {
            if let weight = request.weight, !(weight > 0 && weight.isFinite) {
                throw LoadError.invalidScenario("weight \(weight) of \(Redaction.url(request.url)) is not a positive number")
            }
            for check in request.checks ?? [] {
                do { _ = try LoadCheck(check) } catch let error as LoadError {
                    throw LoadError.invalidScenario("\(request.name ?? Redaction.url(request.url)): \(error.message)")
                }
            }
        }
    }
}
