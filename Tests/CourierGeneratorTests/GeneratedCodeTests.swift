@testable import Courier
import Foundation
import GoldenNotes
import CourierTestSupport
import Testing

/// The golden module is real code: its queries build the requests the discovery document
/// describes, and its objects convert the formats the document names.
@Suite struct GeneratedCodeTests {
    func url<Convertible: QueryConvertible>(_ convertible: Convertible) throws -> String {
        try RequestBuilder.build(convertible.makeQuery(), configuration: ServiceActor.Configuration.suite()).url.absoluteString
    }

    @Test func optionalParametersArePropertiesAndRepeatedOnesRepeat() throws {
        var list = GoldenNotes.Notes.Notes.list()
        list.maxResults = 5
        list.tag = ["a b", "c&d"]
        list.order = .newest
        list.query = "x=1"
        list.fields = "items(id),nextPageToken"
        let url = try url(list)
        #expect(url.hasPrefix("https://notes.example.com/notes/v1/notes?"))
        for part in ["maxResults=5", "tag=a%20b", "tag=c%26d", "order=newest", "query=x%3D1", "fields=items%28id%29%2CnextPageToken"] {
            #expect(url.contains(part), "\(part) in \(url)")
        }
        #expect(list.makeQuery().name == "notes.notes.list")
        #expect(list.makeQuery().api == GoldenNotes.Notes.api)
    }

    /// Every Discovery parameter type compiles and travels as Google's APIs read it: float and
    /// double as numbers, bytes as URL-safe base64, objects as JSON text, durations as `"3.5s"`,
    /// int64 as a decimal string, repeated ones repeated.
    @Test func everyParameterTypeEncodes() throws {
        var list = GoldenNotes.Notes.Notes.list()
        list.minScore = 0.5
        list.weights = [1.25, -2]
        list.cursor = Data([0xFB, 0xFF, 0x01]) // "+/8B" in standard base64
        list.filter = ["tag": "a", "min": 2]
        list.within = .milliseconds(3_500)
        list.sizeAtLeast = 9_007_199_254_740_993 // above 2^53: must not pass through a Double
        let parameters = list.makeQuery().parameters
        #expect(parameters["minScore"] == "0.5")
        #expect(parameters.values(for: "weights") == ["1.25", "-2.0"])
        #expect(parameters["cursor"] == "-_8B")
        #expect(Data(anyBase64: parameters["cursor"] ?? "") == Data([0xFB, 0xFF, 0x01]))
        let filter = try #require(parameters["filter"])
        #expect(try JSONValue(parsing: Data(filter.utf8)) == .object(["tag": "a", "min": 2]))
        #expect(parameters["within"] == "3.5s")
        #expect(parameters["sizeAtLeast"] == "9007199254740993")
        let url = try url(list)
        for part in ["minScore=0.5", "weights=1.25", "weights=-2.0", "cursor=-_8B", "within=3.5s"] {
            #expect(url.contains(part), "\(part) in \(url)")
        }
    }

    /// Every generated query carries the standard parameters and its execution settings itself,
    /// without going through `makeQuery()`.
    @Test func standardParametersAndExecutionAreSetOnTheGeneratedQuery() throws {
        var list = GoldenNotes.Notes.Notes.list()
        list.standardParameters.quotaUser = "user-42"
        list.standardParameters.errorFormat = .v2
        list.execution.paging = .fetchAll(maxPages: 3)
        list.execution.idempotency = .never
        list.execution.timeouts = Timeouts(connect: .seconds(1), idle: .seconds(2))
        list.requestID = "list-1"
        let query = list.makeQuery()
        #expect(query.requestID == "list-1")
        #expect(query.execution.paging == .fetchAll(maxPages: 3))
        #expect(query.execution.idempotency == .never)
        #expect(query.execution.timeouts == Timeouts(connect: .seconds(1), idle: .seconds(2)))
        let url = try url(list)
        #expect(url.contains("quotaUser=user-42"))
        #expect(url.contains("%24.xgafv=2"))
        #expect(!url.contains("userIp"))
        #expect(GoldenNotes.Notes.Notes.list().makeQuery().requestID != GoldenNotes.Notes.Notes.list().makeQuery().requestID)
    }

    @Test func pathParametersStayInTheirSegmentUnlessReserved() throws {
        let hostile = try url(GoldenNotes.Notes.Notes.get(noteId: "../a/b?c"))
        #expect(hostile == "https://notes.example.com/notes/v1/notes/..%2Fa%2Fb%3Fc?prettyPrint=false", "\(hostile)")
        let reserved = try url(GoldenNotes.Notes.Notes.Attachments.list(name: "notes/n1"))
        #expect(reserved == "https://notes.example.com/notes/v1/notes/n1/attachments?prettyPrint=false", "\(reserved)")
    }

    @Test func bodiesUploadsAndMediaVariants() throws {
        var note = GoldenNotes.Note()
        note.id = "n1"
        let insert = GoldenNotes.Notes.Notes.insert(note, upload: UploadParameters(data: Data("hi".utf8), mimeType: "text/plain"))
        let query = insert.makeQuery()
        #expect(query.body == .object(["id": "n1"]))
        #expect(query.uploadPath?.description == "/upload/notes/v1/notes")
        #expect(query.isUpload)
        let media = GoldenNotes.Notes.Notes.get(noteId: "n1").makeMediaQuery()
        #expect(media.downloadsMedia)
        #expect(try RequestBuilder.build(media, configuration: ServiceActor.Configuration.suite()).url.absoluteString.contains("alt=media"))
        #expect(GoldenNotes.Notes.Notes.import(note, project: "p", mode: .replace).makeQuery().method == .post)
        #expect(GoldenNotes.Notes.Notes.delete(noteId: "n1").makeQuery().method == .delete)
    }

    @Test func propertiesConvertTheDocumentsFormats() throws {
        let json = #"""
            {"kind":"notes#note","max-size":"9007199254740993","2fa":true,"created":"2026-11-22T05:00:00.5Z","ttl":"3.5s",
             "payload":"aGk=","color":"SOMETHING_NEW","labels":{"a":"1"},"extra":[1,{"x":null}],"owner":{"email.address":"a@b"},
             "attachments":[{"url":"u","size":"18446744073709551615"}],"json":"field","score":1.5,"rank":-3,
             "related":{"id":"r"},"tags":["t"],"self":"me","unknown":{"kept":true}}
            """#
        var note = try GoldenNotes.Note.decode(from: HTTPResponse(status: 200, body: Data(json.utf8), url: URL(string: "http://x/")!),
                                   limits: .default)
        #expect(note.maxSize == 9_007_199_254_740_993)
        #expect(note._2fa == true)
        #expect(note.created == Date(timeIntervalSince1970: 1_795_323_600.5))
        #expect(note.ttl == .milliseconds(3500))
        #expect(note.payload == Data("hi".utf8))
        #expect(note.color == GoldenNotes.Note.Color(rawValue: "SOMETHING_NEW")) // unknown values survive
        #expect(note.color != .red)
        #expect(note.labels == ["a": "1"])
        #expect(note.extra == [1, ["x": nil]])
        #expect(note.owner?.emailAddress == "a@b")
        #expect(note.attachments?.first?.size == UInt64.max)
        #expect(note.jsonField == "field")
        #expect(note.score == 1.5 && note.rank == -3)
        #expect(note.related?.id == "r")
        #expect(note.tags == ["t"])
        #expect(note.`self` == "me")
        #expect(GoldenNotes.Notes.resolver.resolve(note) is GoldenNotes.Note)

        note.maxSize = 1 << 62
        note.color = .darkBlue
        note.ttl = .seconds(2) + .nanoseconds(5)
        #expect(note.json["max-size"] == "4611686018427387904")
        #expect(note.json["color"] == "dark-blue")
        #expect(note.json["ttl"] == "2.000000005s")
        #expect(note.json["unknown"] == ["kept": true])
    }

    @Test func collectionsPageThroughTheirItems() throws {
        var list = GoldenNotes.FileList()
        list.files = [GoldenNotes.Note(json: ["id": "1"]), GoldenNotes.Note(json: ["id": "2"])]
        list.nextPageToken = "next"
        #expect(list.items.map(\.id) == ["1", "2"]) // `files` is the items key
        #expect(GoldenNotes.FileList.itemsKey == "files")
        var notes = GoldenNotes.NoteList()
        notes.items = [GoldenNotes.Note(json: ["id": "3"])]
        #expect(notes.json["items"] == [["id": "3"]])
    }
}
