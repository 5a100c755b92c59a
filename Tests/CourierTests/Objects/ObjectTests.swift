@testable import Courier
import Foundation
import CourierTestSupport
import Testing

@Suite struct ObjectTests {
    @Test func typedPropertiesReadAndWriteTheJSON() throws {
        var note = Note(json: try #require(try JSONValue(parsing: #"{"id":"n1","title":"T","labels":["a","b"],"extra":{"k":1}}"#).objectValue))
        #expect(note.id == "n1")
        #expect(note.labels == ["a", "b"])
        note.title = "New"
        note.body = nil
        #expect(note.json["title"] == "New")
        #expect(note.json["extra"]?["k"]?.intValue == 1) // unknown field kept
        #expect(note.json.keys == ["id", "title", "labels", "extra"])
    }

    @Test func rawAccessByKeyNextToTypedProperties() throws {
        let game = Game(json: ["kind": "tictactoe#score", "id": "g2", "outcome": "won"])
        // Game declares no `outcome`; the seeds' JSONValueForKey still reaches it.
        #expect(game.json["outcome"]?.stringValue == "won")
    }

    @Test func userPropertiesAreLocalOnly() throws {
        var note = Note(json: ["id": "n1"])
        note.userProperties["localFile"] = URL(fileURLWithPath: "/tmp/x")
        #expect(!note.jsonString.contains("localFile"))
        let encoded = try JSONEncoder().encode(note)
        #expect(!String(decoding: encoded, as: UTF8.self).contains("localFile"))
        #expect(note == Note(json: ["id": "n1"])) // not compared
        #expect((note.userProperties["localFile"] as? URL)?.path == "/tmp/x")
    }

    @Test func objectsAreCodableInsideOtherTypes() throws {
        struct Envelope: Codable, Equatable { var note: Note; var count: Int }
        let envelope = Envelope(note: Note(json: ["id": "n1", "title": "T"]), count: 2)
        let decoded = try JSONDecoder().decode(Envelope.self, from: JSONEncoder().encode(envelope))
        #expect(decoded == envelope)
    }

    @Test func explicitNullIsKeptAndSerialized() {
        var note = Note(json: ["id": "n1", "title": "T"])
        note.setNull("title")
        #expect(note.isNull("title"))
        #expect(note.title == nil)
        #expect(note.jsonString == #"{"id":"n1","title":null}"#)
    }

    @Test func sixtyFourBitIntegersTravelAsStringsAndReadFromEither() {
        struct Counter: APIObject {
            var json: JSONObject
            var userProperties = UserProperties()
            init(json: JSONObject = [:]) { self.json = json }
            var size: Int64? { get { self["size"] } set { self["size"] = newValue } }
        }
        var counter = Counter(json: ["size": 9_007_199_254_740_993])
        #expect(counter.size == 9_007_199_254_740_993)
        counter.json["size"] = "9223372036854775807"
        #expect(counter.size == .max)
        counter.size = 42
        #expect(counter.json["size"] == "42")
    }

    @Test func datesAndBytes() {
        struct Item: APIObject {
            var json: JSONObject
            var userProperties = UserProperties()
            init(json: JSONObject = [:]) { self.json = json }
        }
        var item = Item(json: ["when": "2024-02-29T12:34:56.789Z", "plain": "2024-02-29T12:34:56Z", "bytes": "aGk_-w"])
        let when: Date? = item["when"]
        #expect(when?.timeIntervalSince1970 == 1_709_210_096.789)
        let plain: Date? = item["plain"]
        #expect(plain?.timeIntervalSince1970 == 1_709_210_096)
        let bytes: Data? = item["bytes"]
        #expect(bytes == Data([0x68, 0x69, 0x3F, 0xFB]))
        item["when"] = Date(timeIntervalSince1970: 0)
        #expect(item.json["when"] == "1970-01-01T00:00:00.000Z")
    }

    @Test func resolverPicksTypesByKindAndType() {
        var resolver = ObjectResolver(types: [Game.self, Score.self])
        #expect(resolver.resolve(Game(json: ["kind": "tictactoe#score", "outcome": "won"])) is Score)
        #expect(resolver.resolve(Game(json: ["kind": "tictactoe#game"])) is Game)
        #expect(resolver.resolve(Game(json: ["kind": "something#else"])) is Game) // falls back to the declared type
        resolver.register(Note.self, forKind: "Note") // HTTPRiot's "type": "Note"
        #expect(resolver.resolve(["type": "Note", "title": "x"]) is Note)
    }

    @Test func surrogatesStandInForTypes() {
        var resolver = ObjectResolver(types: [Game.self, Score.self])
        resolver.substitute(Score.self, with: MyScore.self)
        let resolved = resolver.resolve(Game(json: ["kind": "tictactoe#score", "outcome": "won"]))
        #expect((resolved as? MyScore)?.isWin == true)
        let queryLevel = ObjectResolver(types: [Game.self, Score.self]).merging(resolver)
        #expect(queryLevel.resolve(["kind": "tictactoe#score"], expected: Game.self) is MyScore)
    }

    @Test func collectionsExposeItemsAndToken() {
        var list = NoteList(json: ["items": [["id": "a"], ["id": "b"]], "nextPageToken": "t2"])
        #expect(list.items.map(\.id) == ["a", "b"])
        #expect(list[1].id == "b")
        #expect(list.nextPageToken == "t2")
        list.items.append(Note(json: ["id": "c"]))
        #expect(list.items.count == 3)
    }
}

@Suite struct PatchTests {
    @Test func changedAndAddedMembersOnly() {
        let original: JSONObject = ["id": "n1", "title": "Old", "body": "same"]
        let modified: JSONObject = ["id": "n1", "title": "New", "body": "same", "labels": ["a"]]
        #expect(JSONObject.patch(from: original, to: modified) == ["title": "New", "labels": ["a"]])
    }

    @Test func removedMembersBecomeNull() {
        let patch = JSONObject.patch(from: ["id": "n1", "location": "Paris"], to: ["id": "n1"])
        #expect(patch == ["location": nil])
        #expect(String(decoding: patch.serialized(), as: UTF8.self) == #"{"location":null}"#)
    }

    @Test func nestedObjectsAreDiffed() {
        let original: JSONObject = ["meta": ["a": 1, "b": 2, "c": ["d": 1, "e": 2]]]
        let modified: JSONObject = ["meta": ["a": 1, "b": 3, "c": ["d": 1]]]
        #expect(JSONObject.patch(from: original, to: modified) == ["meta": ["b": 3, "c": ["e": nil]]])
    }

    @Test func arraysAreReplacedWhole() {
        let original: JSONObject = ["labels": ["a", "b", "c"]]
        let modified: JSONObject = ["labels": ["a", "c"]]
        #expect(JSONObject.patch(from: original, to: modified) == ["labels": ["a", "c"]])
    }

    @Test func identicalObjectsGiveAnEmptyPatch() {
        let object: JSONObject = ["a": ["b": [1, 2]], "c": nil]
        #expect(JSONObject.patch(from: object, to: object).isEmpty)
    }

    @Test func typeChangesAreReplaced() {
        #expect(JSONObject.patch(from: ["a": ["b": 1]], to: ["a": "flat"]) == ["a": "flat"])
        #expect(JSONObject.patch(from: ["a": "flat"], to: ["a": ["b": 1]]) == ["a": ["b": 1]])
    }

    @Test func objectPatchFromOriginal() {
        var original = Note(json: ["id": "n1", "title": "Old", "body": "B"])
        original.userProperties["x"] = 1
        var modified = original
        modified.title = "New"
        modified.body = nil
        #expect(Note.patch(from: original, to: modified).json == ["title": "New", "body": nil])
    }
}
