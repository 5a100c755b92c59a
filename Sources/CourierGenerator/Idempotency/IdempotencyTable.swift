import Foundation

/// One API's retry classes, by method ID, as its owner publishes them: data the generator reads,
/// so that another API's table is a data change, not code.
///
/// The tables are JSON in the shape below, one per API and version, registered in
/// ``IdempotencyTable/builtIn`` (see `IdempotencyTable+Storage.swift`). A method the table
/// does not name, and every method of an API without a table, keeps HTTP's rule.
///
/// ```json
/// {
///   "api": "storage", "version": "v1",
///   "source": "where the classes come from",
///   "idempotent": ["storage.buckets.insert"],
///   "conditional": {"storage.objects.delete": {"parameters": ["ifGenerationMatch", "generation"]},
///                   "storage.buckets.setIamPolicy": {"bodyFields": ["etag"]}},
///   "nonIdempotent": ["storage.bucketAccessControls.delete"]
/// }
/// ```
public struct IdempotencyTable: Sendable, Equatable {
    public var api: String
    public var version: String
    public var methods: [String: IdempotencyClass]

    /// Parses a table; a method named twice, or a conditional class without a precondition, is an error.
    public init(json: Data) throws {
        struct Conditional: Decodable { var parameters: [String]?; var bodyFields: [String]? }
        struct File: Decodable {
            var api: String
            var version: String
            var idempotent: [String]?
            var conditional: [String: Conditional]?
            var nonIdempotent: [String]?
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch {
            throw GeneratorError.invalidIdempotencyTable("\(error)")
        }
        api = file.api
        version = file.version
        methods = [:]
        func add(_ id: String, _ value: IdempotencyClass) throws {
            guard methods.updateValue(value, forKey: id) == nil else {
                throw GeneratorError.invalidIdempotencyTable("\(id) is classed twice in \(file.api) \(file.version)")
            }
        }
        for id in file.idempotent ?? [] { try add(id, .idempotent) }
        for id in file.nonIdempotent ?? [] { try add(id, .nonIdempotent) }
        for (id, condition) in file.conditional ?? [:] {
            let parameters = condition.parameters ?? [], fields = condition.bodyFields ?? []
            guard !parameters.isEmpty || !fields.isEmpty else {
                throw GeneratorError.invalidIdempotencyTable("\(id) is conditional on nothing")
            }
            try add(id, .conditional(parameters: parameters, bodyFields: fields))
        }
    }

    /// The built-in table of an API, if it has one.
    public static func builtIn(api: String, version: String) -> IdempotencyTable? {
        tables.first { $0.api == api && $0.version == version }
    }

    /// Every built-in table, parsed once. The texts are the package's own, checked by its tests.
    static let tables: [IdempotencyTable] = builtInTexts.compactMap { try? IdempotencyTable(json: Data($0.utf8)) }

    static let builtInTexts = [storageV1]
}
