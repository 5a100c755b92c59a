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

    public init(name: String, version: String, rootURL: URL, servicePath: String, batchPath: String? = nil) {
        self.name = name
        self.version = version
        self.rootURL = rootURL
        self.servicePath = servicePath
        self.batchPath = batchPath ?? "batch/\(name)/\(version)"
    }
}
