@testable import Courier
import CourierTestServer
import Foundation
import GoldenNotes
import CourierTestSupport
import Testing

/// What generated queries carry beyond parameters (Docs/Generator.md): pages that are Swift
/// collections, calendar dates, media limits checked before sending, the download service, and
/// typed batch results; each driven over HTTP against the test server where HTTP is involved.
@Suite struct GeneratedQueryFeatureTests {
    func rooted<Q: QueryConvertible>(_ convertible: Q, at server: TestServer) -> Query<Q.Response> {
        var query = convertible.makeQuery()
        query.execution.rootURL = server.baseURL
        return query
    }

    // MARK: Pages as collections

    @Test func aPageIsARandomAccessCollectionOfItsItems() throws {
        let list = GoldenNotes.NoteList(json: ["items": [["id": "a"], ["id": "b"], ["id": "c"]], "count": 3])
        #expect(list.count == 3)
        #expect(list.countField == 3) // the document's `count` field is renamed, not shadowed
        #expect(list[1].id == "b")
        #expect(list.map(\.id) == ["a", "b", "c"])
        #expect(list.reversed().map(\.id) == ["c", "b", "a"])
        #expect(list.indices == 0..<3)
        #expect(list.first?.id == "a" && list.last?.id == "c")
        var iterator = list.makeIterator()
        #expect(type(of: iterator) == APICollectionIterator<GoldenNotes.NoteList>.self)
        #expect(iterator.next()?.id == "a")
        #expect(GoldenNotes.NoteList().isEmpty)
    }

    @Test func anAggregatedListIndexesAcrossItsScopesInScopeOrder() throws {
        let list = GoldenNotes.NoteAggregatedList(json: ["items": [
            "zones/b": ["notes": [["id": "b1"]]],
            "zones/a": ["notes": [["id": "a1"], ["id": "a2"]]],
            "zones/empty": ["warning": ["message": "none"]],
        ]])
        #expect(list.count == 3)
        #expect([list[0].id, list[1].id, list[2].id] == ["a1", "a2", "b1"])
        #expect(list.map(\.id) == ["a1", "a2", "b1"])
        #expect(Array(list.dropFirst(2)).map(\.id) == ["b1"])
    }

    @Test func aResponseWithAnItemTheTypeCannotHoldIsATypedError() async throws {
        let body = Data(#"{"items": [{"id": "a"}, null, {"id": "c"}]}"#.utf8)
        let response = HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: body, url: URL(string: "https://example.com/notes")!)
        #expect {
            _ = try GoldenNotes.NoteList.decode(from: response, limits: JSONLimits())
        } throws: { error in
            (error as? QueryError)?.code == .unexpectedResponse && "\(error)".contains("item 1")
        }
        let good = HTTPResponse(status: 200, body: Data(#"{"items": [{"id": "a"}]}"#.utf8), url: URL(string: "https://example.com/notes")!)
        #expect(try GoldenNotes.NoteList.decode(from: good, limits: JSONLimits()).map(\.id) == ["a"])
    }

    // MARK: Calendar dates

    @Test func calendarDatesParseOnlyRealDays() throws {
        #expect(CalendarDate("2024-02-29")?.description == "2024-02-29")
        #expect(CalendarDate("2023-02-29") == nil)
        #expect(CalendarDate("2026-13-01") == nil)
        #expect(CalendarDate("2026-1-01") == nil)
        #expect(CalendarDate("2026-11-23T00:00:00Z") == nil)
        #expect(CalendarDate(year: 5, month: 1, day: 9)?.description == "0005-01-09")
        #expect(CalendarDate("2026-01-02")! < CalendarDate("2026-01-10")!)
        let decoded = try JSONDecoder().decode([CalendarDate].self, from: Data(#"["2026-11-23"]"#.utf8))
        #expect(decoded == [CalendarDate(year: 2026, month: 11, day: 23)!])
    }

    @Test func aDateFieldAndADateParameterAreCalendarDates() throws {
        var note = GoldenNotes.Note(json: ["dueDate": "2026-12-01"])
        #expect(note.dueDate == CalendarDate(year: 2026, month: 12, day: 1))
        note.dueDate = CalendarDate("2027-01-31")
        #expect(note.json["dueDate"] == "2027-01-31")
        var list = GoldenNotes.Notes.Notes.list()
        list.day = CalendarDate("2026-11-23")
        #expect(list.makeQuery().parameters.encoded.contains("day=2026-11-23"))
    }

    @Test func aResponseThatIsAMapDecodesEveryValue() async throws {
        try await withServerAndService { server, service in
            let keys: [String: String] = try await service.execute(rooted(GoldenNotes.Notes.Notes.publicKeys(), at: server))
            #expect(keys == ["key-1": "PEM one", "key-2": "PEM two"])
        }
        let url = URL(string: "https://example.com/keys")!
        let odd = HTTPResponse(status: 200, body: Data(#"{"a": "x", "b": 3}"#.utf8), url: url)
        #expect { _ = try [String: String].decode(from: odd, limits: JSONLimits()) } throws: { error in
            (error as? QueryError)?.code == .unexpectedResponse && "\(error)".contains("\"b\"")
        }
        let array = HTTPResponse(status: 200, body: Data(#"["2026-01-02", "2026-02-30"]"#.utf8), url: url)
        #expect { _ = try [CalendarDate].decode(from: array, limits: JSONLimits()) } throws: { error in
            (error as? QueryError)?.code == .unexpectedResponse && "\(error)".contains("element 1")
        }
    }

    @Test func aSchemaNamedLikeACourierProtocolIsRenamedNotShadowing() {
        // BigQuery and Chrome UX Report have a `QueryResponse` schema; the method still answers with it.
        #expect(GoldenNotes.Notes.Notes.QueryQuery.Response.self == GoldenNotes.QueryResponseObject.self)
        let query = GoldenNotes.Notes.Notes.query().makeQuery()
        #expect(query.method == .post && query.path == "notes:query")
    }

    @Test func repeatedObjectParametersTravelAsJSONText() {
        var list = GoldenNotes.Notes.Notes.list()
        list.extensions = [["@type": "type.googleapis.com/x"], ["n": 1]]
        let pairs = list.makeQuery().parameters.encoded.split(separator: "&").compactMap { $0.removingPercentEncoding }
        #expect(pairs.filter { $0.hasPrefix("extensions=") }
            == [#"extensions={"@type":"type.googleapis.com/x"}"#, #"extensions={"n":1}"#])
    }

    // MARK: Media

    @Test func mediaDownloadsGoToTheDownloadServiceWhenTheDocumentSaysSo() async throws {
        try await withServerAndService { server, service in
            server.notes.seed(count: 1)
            let media = rooted(GoldenNotes.Notes.Notes.get(noteId: "note-0001"), at: server)
            #expect(!media.usesMediaDownloadService) // metadata: the API's own path
            let download = { () -> Query<MediaData> in
                var query = GoldenNotes.Notes.Notes.get(noteId: "note-0001").makeMediaQuery()
                query.execution.rootURL = server.baseURL
                return query
            }()
            let request = try RequestBuilder.build(download, configuration: service.configuration)
            #expect(request.url.path == "/download/notes/v1/notes/note-0001")
            let metadataRequest = try RequestBuilder.build(media, configuration: service.configuration)
            #expect(metadataRequest.url.path == "/notes/v1/notes/note-0001")
            let bytes = try await service.execute(download)
            #expect(String(decoding: bytes.data, as: UTF8.self) == "Body 1")
        }
    }

    @Test func anUploadTheMethodCannotTakeFailsBeforeAnythingIsSent() async throws {
        try await withServerAndService { server, service in
            var note = GoldenNotes.Note()
            note.title = "media"
            func insert(_ upload: UploadParameters) -> Query<GoldenNotes.Note> {
                rooted(GoldenNotes.Notes.Notes.insert(note, upload: upload), at: server)
            }
            let before = server.counters.requests
            // 1 MiB + 1 byte against maxSize "1MB".
            let big = UploadParameters(data: Data(count: (1 << 20) + 1), mimeType: "text/plain", uploadProtocol: .multipart)
            await #expect(throws: UploadError.mediaTooLarge) { _ = try await service.execute(insert(big)) }
            let image = UploadParameters(data: Data("png".utf8), mimeType: "image/png", uploadProtocol: .multipart)
            await #expect(throws: UploadError.mediaTypeNotAccepted) { _ = try await service.upload(insert(image)).value }
            #expect(server.counters.requests == before)
            // Within the limits (a `text/*` type, with parameters), the upload goes out.
            let text = UploadParameters(data: Data("hello".utf8), mimeType: "Text/Plain; charset=utf-8", uploadProtocol: .multipart)
            await #expect(throws: APIError.self) { _ = try await service.execute(insert(text)) } // the test server has no media route
            #expect(server.counters.requests == before + 1)
        }
    }

    @Test func mimePatternsMatchLikeHTTP() {
        #expect(MediaUploadLimits.matches(pattern: "*/*", mimeType: "application/x-anything"))
        #expect(MediaUploadLimits.matches(pattern: "image/*", mimeType: "IMAGE/PNG"))
        #expect(MediaUploadLimits.matches(pattern: "message/rfc822", mimeType: "message/rfc822; charset=ascii"))
        #expect(!MediaUploadLimits.matches(pattern: "image/*", mimeType: "video/mp4"))
        #expect(!MediaUploadLimits.matches(pattern: "application/pdf", mimeType: "application/pdfx"))
    }

    // MARK: Typed batches

    @Test func batchesOfGeneratedQueriesReturnTypedResults() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 3)
            var configuration = ServiceActor.Configuration.suite()
            configuration.queries.rootURL = server.baseURL // the wire batch goes to the service's root
            try await withCheckedService(configuration: configuration) { service in
                let (note, list, missing) = try await service.batch(
                    GoldenNotes.Notes.Notes.get(noteId: "note-0002"),
                    GoldenNotes.Notes.Notes.list(),
                    GoldenNotes.Notes.Notes.get(noteId: "nope"))
                #expect(try note.get().title == "Note 2")
                #expect(try list.get().count == 3)
                #expect(throws: APIError.self) { try missing.get() }

                var batch = QueryBatch()
                let first = batch.add(GoldenNotes.Notes.Notes.get(noteId: "note-0001"))
                let all = batch.add(GoldenNotes.Notes.Notes.list())
                let results = try await service.executeBatch(batch) // the multipart wire batch
                let typedNote: GoldenNotes.Note = try results.value(for: first)
                let typedList: GoldenNotes.NoteList = try results.value(for: all)
                #expect(typedNote.id == "note-0001")
                #expect(typedList.map(\.id) == ["note-0001", "note-0002", "note-0003"])
                #expect(throws: BatchError.self) { try results.value(for: BatchKey<GoldenNotes.Note>(requestID: "elsewhere")) }

                let (wireNote, wireMissing) = try await service.executeBatch(GoldenNotes.Notes.Notes.get(noteId: "note-0003"),
                                                                             GoldenNotes.Notes.Notes.get(noteId: "nope"))
                #expect(try wireNote.get().title == "Note 3")
                #expect(throws: APIError.self) { try wireMissing.get() }
            }
        }
    }
}
