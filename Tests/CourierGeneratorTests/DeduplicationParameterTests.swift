@testable import CourierGenerator
import CourierTestSupport
import Foundation
import GoldenNotes
import Testing

/// Which methods' `requestId` the server deduplicates by (AIP-155), read by the generator from
/// the descriptions their owners wrote: every kind in Google's 611 Discovery documents
/// (`Tests/Conformance/discovery-request-ids`), and the generated code.
@Suite struct DeduplicationParameterTests {
    struct Case: Decodable {
        var httpMethod: String
        var location: String
        var type: String
        var format: String?
        var description: String
        var methods: Int
        var example: String
    }

    static func cases() throws -> [Case] {
        struct File: Decodable { var cases: [Case] }
        let url = Repository.path("Tests/Conformance/discovery-request-ids/request-ids.json")
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).cases
    }

    static func method(_ item: Case) throws -> DiscoveryMethod {
        var parameter: [String: String] = ["type": item.type, "location": item.location, "description": item.description]
        parameter["format"] = item.format
        let json: [String: Any] = ["id": item.example, "path": "x", "httpMethod": item.httpMethod, "parameters": ["requestId": parameter]]
        return try JSONDecoder().decode(DiscoveryMethod.self, from: JSONSerialization.data(withJSONObject: json))
    }

    /// The writes left alone, each with why: their descriptions promise nothing about a repeat.
    static let leftAlone: [(start: String, why: String)] = [
        ("an optional request id to identify requests.", "identifies the request, says nothing of a repeat"),
        ("the request id must be a valid uuid", "only the ID's format"),
        ("a tag that prevents multiple concurrent workflow instances", "stops concurrent runs, not a repeat of one that ended"),
        ("a unique identifier for this request. this request is only idempotent if both", "idempotent only with another parameter"),
        ("request id used for debugging.", "for debugging"),
        ("", "no description"),
        ("a randomly generated numeric id", "numeric (int64): Courier fills string UUIDs"),
    ]

    @Test func theWritesWhoseServersIgnoreARepeatAreFound() throws {
        var found = 0, total = 0, reads = 0, leftAlone = 0
        var used = Set<String>()
        for item in try Self.cases() {
            total += item.methods
            let name = DeduplicationParameter.find(in: try Self.method(item))
            if name != nil {
                #expect(name == "requestId")
                #expect(!["GET", "HEAD"].contains(item.httpMethod))
                found += item.methods
                continue
            }
            if item.httpMethod == "GET" { reads += item.methods; continue } // safe to repeat anyway
            var text = item.description.lowercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
            if text.hasPrefix("optional. ") { text.removeFirst("optional. ".count) }
            let reason = Self.leftAlone.first { $0.start.isEmpty ? text.isEmpty : text.hasPrefix($0.start) }
            #expect(reason != nil, "\(item.example) (\(item.httpMethod)) is left alone for no listed reason: \(item.description)")
            if let reason { used.insert(reason.start) }
            leftAlone += item.methods
        }
        #expect(total == 3_104)
        #expect(found == 3_058, "methods whose server ignores a repeated requestId")
        #expect(reads == 9 && leftAlone == 37)
        #expect(used.count == Self.leftAlone.count, "every reason still applies to some method: \(used)")
    }

    @Test func theRulesEdges() {
        let ignores = "Specify a unique request ID so that if you must retry your request, the server will know to ignore the request if it has already been completed."
        #expect(DeduplicationParameter.declaresDeduplication(ignores))
        #expect(DeduplicationParameter.declaresDeduplication("Optional. Idempotent request UUID."))
        #expect(DeduplicationParameter.declaresDeduplication("A unique request ID for the server to detect duplicated requests."))
        #expect(!DeduplicationParameter.declaresDeduplication("An optional request ID to identify requests."))
        #expect(!DeduplicationParameter.declaresDeduplication("This request is only idempotent if both `request_id` and `session_id` are provided."))
    }

    /// The golden client's insert names its parameter; its documentation says what Courier does.
    @Test func theGeneratedQueryDeclaresIt() throws {
        let insert = GoldenNotes.Notes.Notes.insert(GoldenNotes.Note())
        #expect(insert.makeQuery().deduplicationParameter == "requestId")
        #expect(GoldenNotes.Notes.Notes.list().makeQuery().deduplicationParameter == nil)
        let source = try String(contentsOf: Repository.path("Tests/Golden/GoldenNotes/Notes+Queries.swift"), encoding: .utf8)
        #expect(source.contains("Left unset, Courier sets a new UUID each time the query is executed."))
    }
}
