import Courier
@testable import CourierGenerator
import CourierTestSupport
import Foundation
import Testing

/// The retry classes the generator reads as data (``IdempotencyTable``), checked against the
/// Discovery document they name and against Google's own conformance file.
@Suite struct IdempotencyTableTests {
    static let storage = IdempotencyTable.builtIn(api: "storage", version: "v1")

    @Test func everyBuiltInTableParses() throws {
        for text in IdempotencyTable.builtInTexts { _ = try IdempotencyTable(json: Data(text.utf8)) }
        #expect(IdempotencyTable.tables.count == IdempotencyTable.builtInTexts.count)
        #expect(Self.storage?.methods.count == 47)
    }

    /// Every method the table names is a method of the shipped document (a typo would silently
    /// leave a method on HTTP's rule).
    @Test func everyClassedMethodExists() throws {
        let table = try #require(Self.storage)
        let document = try String(contentsOf: Repository.root.appendingPathComponent("Sources/GoogleStorage/discovery.json"), encoding: .utf8)
        for id in table.methods.keys { #expect(document.contains("\"id\": \"\(id)\""), "\(id) is not in storage v1's document") }
    }

    /// The classes agree with the conformance file's scenarios: 1 always idempotent, 2 and 3
    /// conditionally, 4 never (the file's names mapped to the document's IDs).
    @Test func theClassesAgreeWithGooglesConformanceScenarios() throws {
        struct File: Decodable {
            struct Scenario: Decodable { var id: Int; var methods: [Method] }
            struct Method: Decodable { var name: String }
            var retryTests: [Scenario]
        }
        let url = Repository.root.appendingPathComponent("Tests/Conformance/googleapis-conformance-tests/retry_tests.json")
        let file = try JSONDecoder().decode(File.self, from: Data(contentsOf: url))
        let table = try #require(Self.storage)
        func documentID(_ name: String) -> String {
            let renamed = ["storage.bucket_acl": "storage.bucketAccessControls", "storage.default_object_acl": "storage.defaultObjectAccessControls",
                           "storage.object_acl": "storage.objectAccessControls", "storage.hmacKey": "storage.projects.hmacKeys",
                           "storage.serviceaccount": "storage.projects.serviceAccount"]
            let resource = String(name[..<name.lastIndex(of: ".")!])
            return (renamed[resource] ?? resource) + name[name.lastIndex(of: ".")!...]
        }
        var checked = 0
        for scenario in file.retryTests where (1...4).contains(scenario.id) {
            for method in scenario.methods {
                let id = documentID(method.name)
                let actual = try #require(table.methods[id], "\(id) has no class")
                switch (scenario.id, actual) {
                case (1, .idempotent), (2, .conditional), (3, .conditional), (4, .nonIdempotent): checked += 1
                default: Issue.record("scenario \(scenario.id) classes \(method.name) otherwise than the table's \(actual)")
                }
            }
        }
        #expect(checked == 22 + 11 + 11 + 14)
    }

    @Test func aTableThatContradictsItselfIsRefused() {
        #expect(throws: GeneratorError.self) {
            try IdempotencyTable(json: Data(#"{"api":"a","version":"v1","idempotent":["a.x"],"nonIdempotent":["a.x"]}"#.utf8))
        }
        #expect(throws: GeneratorError.self) {
            try IdempotencyTable(json: Data(#"{"api":"a","version":"v1","conditional":{"a.x":{}}}"#.utf8))
        }
        #expect(throws: GeneratorError.self) { try IdempotencyTable(json: Data("not json".utf8)) }
    }

    /// A table given to the generator lands on the queries; without one, HTTP's rule (no class).
    @Test func theGeneratorWritesTheClassesOnTheQueries() throws {
        let notes = try Data(contentsOf: Repository.root.appendingPathComponent("Tests/Golden/notes.discovery.json"))
        let plain = try Generator.generate(discovery: notes, moduleName: "Notes")
        #expect(!plain.files.contains { $0.contents.contains("methodIdempotency") })
        let table = try IdempotencyTable(json: Data(#"""
            {"api": "notes", "version": "v1", "idempotent": ["notes.notes.insert"],
             "conditional": {"notes.notes.delete": {"parameters": ["ifMatch"], "bodyFields": ["etag"]}}}
            """#.utf8))
        let classed = try Generator.generate(discovery: notes, moduleName: "Notes", idempotency: table)
        let queries = try #require(classed.files.first { $0.name.hasSuffix("+Queries.swift") }).contents
        #expect(queries.contains("query.methodIdempotency = .idempotent"))
        #expect(queries.contains(#"query.methodIdempotency = .conditional(parameters: ["ifMatch"], bodyFields: ["etag"])"#))
    }
}
