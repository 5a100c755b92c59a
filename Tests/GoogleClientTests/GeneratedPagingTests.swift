@testable import Courier
import CourierTestServer
import Foundation
import GoldenNotes
import CourierTestSupport
import Testing

/// Paging by the protocol, not by name (Docs/Generator.md, "Paging"): the golden document's
/// three paged shapes, generated and then driven over HTTP against the test server's
/// `PagedShapes` routes (three pages each).
@Suite struct GeneratedPagingTests {
    func rooted<Q: QueryConvertible>(_ convertible: Q, at server: TestServer, paging: PagingPolicy? = nil) -> Query<Q.Response> {
        var query = convertible.makeQuery()
        query.execution.rootURL = server.baseURL
        query.execution.paging = paging
        return query
    }

    @Test func theShapesGetTheRightConformances() {
        #expect(GoldenNotes.NoteAggregatedList.itemsKey == "items")
        #expect(GoldenNotes.NoteAggregatedList.itemsListKey == "notes")
        #expect(GoldenNotes.OperationList.itemsKey == "operations") // not "unreachable"
        #expect(GoldenNotes.OperationList.itemsListKey == nil)
        #expect((GoldenNotes.SearchPage() as Any) is any APIPage)
        #expect(!((GoldenNotes.SearchPage() as Any) is any APICollection))
    }

    @Test func anAggregatedListFlattensItsScopesAndMergesScopeByScope() throws {
        let first = GoldenNotes.NoteAggregatedList(json: try JSONValue(parsing: Data(#"""
            {"items": {"zones/b": {"notes": [{"id": "b1"}]}, "zones/a": {"notes": [{"id": "a1"}, {"id": "a2"}]},
                       "zones/empty": {"warning": {"message": "none"}}},
             "unreachables": ["zones/c"], "nextPageToken": "2"}
            """#.utf8)).objectValue!)
        #expect(first.items.map(\.id) == ["a1", "a2", "b1"]) // scope order, then item order
        #expect(first.unreachables == ["zones/c"])
        let second = GoldenNotes.NoteAggregatedList(json: ["items": ["zones/a": ["notes": [["id": "a3"]]],
                                                                     "zones/d": ["notes": [["id": "d1"]]]]])
        let merged = first.appending(second)
        #expect(merged.items.map(\.id) == ["a1", "a2", "a3", "b1", "d1"])
        #expect(merged.nextPageToken == nil)
        var replaced = merged
        replaced.items = [GoldenNotes.Note(json: ["id": "z"])]
        #expect(replaced.items.map(\.id) == ["z"])
    }

    @Test(arguments: ["aggregated", "operations"])
    func fetchAllMergesEveryPageOverHTTP(shape: String) async throws {
        try await withServerAndService { server, service in
            let expected = (1...PagedShapes.pageCount).flatMap { ["\($0)-1", "\($0)-2"] }
            if shape == "aggregated" {
                let all = try await service.execute(rooted(GoldenNotes.Notes.Notes.aggregatedList(), at: server, paging: .fetchAll()))
                #expect(all.items.compactMap(\.id).sorted() == expected)
                #expect(all.nextPageToken == nil)
                var pages = 0
                for try await page in service.pages(of: rooted(GoldenNotes.Notes.Notes.aggregatedList(), at: server)) {
                    pages += 1
                    #expect(page.items.count == 2)
                }
                #expect(pages == PagedShapes.pageCount)
            } else {
                let all = try await service.execute(rooted(GoldenNotes.Notes.Notes.Operations.list(), at: server, paging: .fetchAll()))
                #expect(all.items.map(\.name) == expected)
                var names: [String] = []
                for try await operation in service.items(of: rooted(GoldenNotes.Notes.Notes.Operations.list(), at: server)) {
                    names.append(operation.name ?? "")
                }
                #expect(names == expected)
            }
        }
    }

    /// A page with no single list of items still pages, and `fetchAll` refuses it with a typed
    /// error instead of returning the first page as if it were all.
    @Test func aPageWithoutItemsPagesButIsNeverMergedSilently() async throws {
        try await withServerAndService { server, service in
            var matches: [String] = []
            for try await page in service.pages(of: rooted(GoldenNotes.Notes.Notes.search(), at: server)) {
                matches += page.matches?.compactMap(\.id) ?? []
            }
            #expect(matches == (1...PagedShapes.pageCount).flatMap { ["\($0)-1", "\($0)-2"] })
            let error = await #expect(throws: QueryError.self) {
                try await service.execute(rooted(GoldenNotes.Notes.Notes.search(), at: server, paging: .fetchAll()))
            }
            #expect(error == .pagesNotMergeable)
            // One page asked for is one page given.
            let single = try await service.execute(rooted(GoldenNotes.Notes.Notes.search(), at: server))
            #expect(single.nextPageToken == "2")
        }
    }
}
