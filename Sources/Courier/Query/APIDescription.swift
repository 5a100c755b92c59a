import Foundation

/// Where an API lives: what GTLR keeps on a service class (`rootURLString`, `servicePath`,
/// `batchPath`). Generated clients carry one; hand-written queries make their own.
public struct APIDescription: Sendable, Hashable {
    public var name: String
    public var version: String
    /// `https://storage.googleapis.com/`
    public var rootURL: URL
    /// Paths of queries are relative to this (`storage/v1/`), unless they start with `/`.
    public var servicePath: String
    /// Where wire batches go (`batch/storage/v1`).
    public var batchPath: String
    /// Discovery's `dataWrapper` feature (the Cloud Translation API v2): JSON bodies travel as
    /// `{"data": …}` both ways. Queries send and decode the inner value; Courier wraps and
    /// unwraps it, as google-api-python-client does.
    public var dataWrapper: Bool

    public init(name: String, version: String, rootURL: URL, servicePath: String, batchPath: String? = nil,
                dataWrapper: Bool = false) {
        self.name = name
        self.version = version
        self.rootURL = rootURL
        self.servicePath = servicePath
        self.batchPath = batchPath ?? "batch/\(name)/\(version)"
        self.dataWrapper = dataWrapper
    }
}

extension APIDescription {
    /// `body` as it travels: a JSON object goes inside `{"data": …}` for an API with
    /// ``dataWrapper``, unless it has a `data` member already (google-api-python-client's rule,
    /// which wraps objects alone).
    func wireBody(_ body: JSONValue) -> JSONValue {
        guard dataWrapper, case .object(let object) = body, object["data"] == nil else { return body }
        return .object(["data": body])
    }

    /// `response` as its query decodes it: for an API with ``dataWrapper``, the body is the
    /// `data` member of the JSON object it holds (a body without one is left as it is).
    func unwrapped(_ response: HTTPResponse) -> HTTPResponse {
        guard dataWrapper, case .object(let object)? = try? JSONValue(parsing: response.body), let data = object["data"] else {
            return response
        }
        return HTTPResponse(head: response.head, body: data.serialized())
    }
}
