@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// Queries against the test server's Notes API: the whole pipeline over loopback.
@Suite struct QueryTests {
    func withNotes<T>(seed: Int = 0, configure: (inout ServiceActor.Configuration) -> Void = { _ in },
                      _ body: (TestServer, ServiceActor) async throws -> T) async throws -> T {
        try await withTestServer { server in
            if seed > 0 { server.notes.seed(count: seed) }
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configure(&configuration)
            return try await withCheckedService(configuration: configuration) { service in try await body(server, service) }
        }
    }

    @Test func crudRoundTrip() async throws {
        try await withNotes { _, service in
            var draft = Note()
            draft.title = "Groceries"
            draft.body = "milk"
            let created = try await service.execute(Notes.insert(draft))
            #expect(created.title == "Groceries")
            let id = try #require(created.id)
            #expect(created.etag != nil)

            var fetched = try await service.execute(Notes.get(id))
            #expect(fetched == created)
            fetched.title = "Groceries (edited)"
            let updated = try await service.execute(Notes.update(fetched))
            #expect(updated.title == "Groceries (edited)")
            #expect(updated.etag != created.etag)

            _ = try await service.execute(Notes.delete(id, etag: updated.etag))
            await #expect(throws: APIError.self) { try await service.execute(Notes.get(id)) }
        }
    }

    @Test func unknownFieldsSurviveReadModifyWrite() async throws {
        try await withNotes { server, service in
            var note = Note()
            note.id = "keeper"
            note.json["color"] = "teal"                                  // not declared by Note
            note.json["meta"] = ["pinned": true, "order": ["a", "b"]]    // nor this
            _ = try await service.execute(Notes.insert(note))

            var fetched = try await service.execute(Notes.get("keeper"))
            fetched.title = "Now with a title"
            _ = try await service.execute(Notes.update(fetched))

            let final = try await service.execute(Notes.get("keeper"))
            #expect(final.title == "Now with a title")
            #expect(final.json["color"] == "teal")
            #expect(final.json["meta"] == ["pinned": true, "order": ["a", "b"]])
        }
    }

    @Test func responsesKeepServerOrderUnknownFieldsAndBigIntegers() async throws {
        try await withNotes { _, service in
            let note = try await service.execute(Notes.raw("ordered"))
            #expect(note.json.keys == ["zeta", "kind", "id", "alpha", "big", "exact", "title", "unknownField"])
            #expect(note.json["alpha"]?.objectValue?.keys == ["y", "x"])
            #expect(note.json["big"]?.numberValue?.description == "12345678901234567890123")
            #expect(note.json["exact"]?.int64Value == 9_007_199_254_740_993)
            #expect(note.json["unknownField"]?["nested"]?[2]?["deep"] == true)
        }
    }

    @Test func patchSendsExplicitNullsThatRemoveFields() async throws {
        try await withNotes { _, service in
            var note = Note()
            note.id = "p1"
            note.title = "Title"
            note.body = "Body"
            note.json["meta"] = ["a": 1, "b": 2]
            let original = try await service.execute(Notes.insert(note))

            var modified = original
            modified.body = nil                 // removed → null in the patch
            modified.json["meta"] = ["a": 1, "b": 3]
            let patch = Note.patch(from: original, to: modified)
            #expect(patch.json == ["body": nil, "meta": ["b": 3]])

            let patched = try await service.execute(Notes.patch(id: "p1", patch, etag: original.etag))
            #expect(patched.body == nil)
            #expect(patched.json["body"] == nil)
            #expect(patched.title == "Title")
            #expect(patched.json["meta"] == ["a": 1, "b": 3])
        }
    }

    @Test func etagsGive304And412() async throws {
        try await withNotes(seed: 1) { _, service in
            let note = try await service.execute(Notes.get("note-0001"))
            var conditional = Notes.get("note-0001")
            conditional.etag = note.etag
            let notModified = await #expect(throws: APIError.self) { try await service.execute(conditional) }
            #expect(notModified?.status == 304)

            var stale = note
            stale.etag = "\"v-stale\""
            stale.title = "Lost update"
            do {
                _ = try await service.execute(Notes.update(stale))
                Issue.record("a stale ETag must fail")
            } catch APIError.preconditionFailed {
                // expected
            }
            // A weak ETag is not sent as If-Match, so the write goes through.
            var weak = note
            weak.etag = "W/\"whatever\""
            weak.title = "Weak"
            #expect(try await service.execute(Notes.update(weak)).title == "Weak")
        }
    }

    @Test(arguments: ["../x", "a/b", "..", ".", "%2F", "a b?c#d", "ü/..", "?key=1&x"])
    func hostilePathParametersStayOneSegment(id: String) async throws {
        try await withNotes { server, service in
            var note = Note()
            note.id = id
            note.title = "hostile"
            _ = try await service.execute(Notes.insert(note))
            let fetched = try await service.execute(Notes.get(id))
            #expect(fetched.id == id)
            #expect(fetched.title == "hostile")
            // And nothing else was touched: the server saw notes/<one segment>.
            let response = try await service.send(HTTPRequest(url: server.url("/notes/v1/notes/" + URITemplate.encode(id, allowReserved: false))))
            let rawPath = try #require(response.headers["X-Request-Path"])
            #expect(rawPath.split(separator: "/").count == 4)
            #expect(server.notes.noteIDs == [id])
        }
    }

    @Test func standardParametersAndHeaders() async throws {
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.apiKey = "KEY-s3kr1t-123"
            configuration.queries.applicationName = "NotesApp/2.1"
            try await withCheckedService(configuration: configuration) { service in
                var query = Query<GenericObject>(api: TestAPIs.notes, name: "echo", path: "/echo")
                query.parameters.append("label", "a")
                query.parameters.append("label", "b c")
                query.parameters.set("pinned", true)
                query.parameters.set("since", Date(timeIntervalSince1970: 86_400))
                query.fields = "items(id,title),nextPageToken"
                let echo = try await service.execute(query)
                let queryString = try #require(echo.json["query"]?.stringValue)
                #expect(queryString.contains("label=a&label=b%20c"))
                #expect(queryString.contains("pinned=true"))
                #expect(queryString.contains("since=1970-01-02T00%3A00%3A00.000Z"))
                #expect(queryString.contains("fields=items%28id%2Ctitle%29%2CnextPageToken"))
                #expect(queryString.contains("prettyPrint=false"))
                #expect(queryString.contains("key=KEY-s3kr1t-123"))
                let headers = try #require(echo.json["headers"]?.arrayValue).compactMap { $0.arrayValue?.compactMap(\.stringValue) }
                func header(_ name: String) -> String? { headers.first { $0[0].lowercased() == name }?[1] }
                #expect(header("accept") == "application/json")
                #expect(header("user-agent")?.hasPrefix("NotesApp/2.1 Courier/") == true)
                #expect(header("user-agent")?.contains("(Linux; Swift 6.") == true)
            }
        }
    }

    @Test func partialResponsesWithFields() async throws {
        try await withNotes(seed: 3) { _, service in
            var query = Notes.list()
            query.fields = "items(id),nextPageToken"
            let list = try await service.execute(query)
            #expect(list.items.count == 3)
            #expect(list.items.allSatisfy { $0.json.keys == ["id"] })
            #expect(list.json["kind"] == nil)
        }
    }

    @Test func mediaDownloadWithAltMedia() async throws {
        try await withNotes(seed: 1) { _, service in
            var query = Query<MediaData>(api: TestAPIs.notes, name: "notes.notes.get", path: "notes/{id}",
                                         pathParameters: ["id": "note-0001"])
            query.downloadsMedia = true
            let media = try await service.execute(query)
            #expect(String(decoding: media.data, as: UTF8.self) == "Body 1")
            #expect(media.contentType?.hasPrefix("text/plain") == true)
        }
    }

    @Test func thirtyPagesThroughTheAsyncSequences() async throws {
        try await withNotes(seed: 300) { _, service in
            var pages = 0
            var ids: [String] = []
            for try await page in service.pages(of: Notes.list(maxResults: 10)) {
                pages += 1
                ids += page.items.compactMap(\.id)
            }
            #expect(pages == 30)
            #expect(ids.count == 300)
            #expect(ids.first == "note-0001" && ids.last == "note-0300")
            #expect(Set(ids).count == 300)

            var count = 0
            for try await note in service.items(of: Notes.list(maxResults: 10)) {
                count += 1
                if count == 15 { #expect(note.id == "note-0015"); break } // lazy: stops after 2 pages
            }
        }
    }

    @Test func fetchAllPagesMergesUpToTheCap() async throws {
        try await withNotes(seed: 300) { server, service in
            var all = Notes.list(maxResults: 10)
            all.execution.paging = .fetchAll(maxPages: 30)
            let merged = try await service.execute(all)
            #expect(merged.items.count == 300)
            #expect(merged.nextPageToken == nil)

            // The default cap of 25 pages: a typed, documented outcome, not a crash.
            var capped = Notes.list(maxResults: 10)
            capped.execution.paging = .fetchAll
            let partial = try await service.execute(capped)
            #expect(partial.items.count == 250)
            #expect(partial.nextPageToken == "page-250")

            var strict = Notes.list(maxResults: 10)
            strict.execution.paging = .fetchAll(maxPages: 25, whenLimitReached: .fail)
            let error = await #expect(throws: QueryError.self) { try await service.execute(strict) }
            #expect(error == .pageLimitReached)
            #expect(error?.pagesFetched == 25)
        }
    }

    @Test func serviceLevelPagingAppliesToEveryQuery() async throws {
        try await withNotes(seed: 25, configure: { $0.queries.paging = .fetchAll }) { _, service in
            let all = try await service.execute(Notes.list(maxResults: 10))
            #expect(all.items.count == 25)
            var single = Notes.list(maxResults: 10)
            single.execution.paging = .single
            let one = try await service.execute(single)
            #expect(one.items.count == 10)
        }
    }

    @Test func kindResolutionForMixedCollections() async throws {
        try await withTestServer { server in
            let configuration = ServiceActor.Configuration.testing(server.baseURL)
            let resolver = ObjectResolver(types: [Game.self, Score.self])
            try await withCheckedService(configuration: configuration) { service in
                let list = try await service.execute(Query<GameList>(api: TestAPIs.ticTacToe, name: "games.list", path: "games"))
                let resolved = resolver.resolveItems(of: list)
                #expect(resolved.map { String(describing: type(of: $0)) } == ["Game", "Score", "Game", "Score"])
                #expect((resolved[1] as? Score)?.outcome == "won")

                // The declared type is Game, but the server sends a score: raw access still works,
                // and the resolver (with a per-query surrogate) gives the richer type.
                let board = try await service.execute(Query<Game>(api: TestAPIs.ticTacToe, name: "currentBoard", path: "currentBoard"))
                #expect(board.json["outcome"] == "won")
                var perQuery = ObjectResolver()
                perQuery.substitute(Score.self, with: MyScore.self)
                #expect((resolver.merging(perQuery).resolve(board) as? MyScore)?.isWin == true)
            }
        }
    }

    @Test func malformedAndTruncatedJSONAreTypedErrors() async throws {
        try await withNotes { server, service in
            let malformed = await #expect(throws: QueryError.self) { try await service.execute(Notes.raw("malformed")) }
            #expect(malformed == .malformedResponse)
            #expect(malformed?.jsonError == .syntax)
            let truncated = await #expect(throws: QueryError.self) { try await service.execute(Notes.raw("truncated-json")) }
            #expect(truncated == .malformedResponse)
            #expect(truncated?.jsonError == .truncated)
            // A body cut off on the wire is a transport error, before JSON is even looked at.
            var cut = Query<Note>(api: TestAPIs.notes, name: "cut", path: "/truncated")
            cut.execution.rootURL = server.faultURL
            cut.execution.retry = .disabled
            await #expect(throws: TransportError.connectionLost) { try await service.execute(cut) }
            // Well-formed JSON of the wrong shape.
            let array = Query<Note>(api: TestAPIs.notes, name: "array", path: "/echo")
            _ = try await service.execute(array) // an object: fine
            struct Strict: Decodable, QueryResponse { var mustExist: Int }
            let wrong = await #expect(throws: QueryError.self) {
                try await service.execute(Query<Strict>(api: TestAPIs.notes, name: "strict", path: "/echo"))
            }
            #expect(wrong == .unexpectedResponse)
        }
    }

    @Test func plainDecodableResponses() async throws {
        struct EchoSummary: Decodable, QueryResponse { var method: String; var path: String }
        try await withNotes { _, service in
            let summary = try await service.execute(Query<EchoSummary>(api: TestAPIs.notes, name: "echo", method: .delete, path: "/echo"))
            #expect(summary.method == "DELETE")
            #expect(summary.path == "/echo")
        }
    }
}
