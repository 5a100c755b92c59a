import Courier
import Foundation

/// Hand-written models of the test server's Notes and TicTacToe APIs, as an application would write them.
enum TestAPIs {
    static let notes = APIDescription(name: "notes", version: "v1", rootURL: URL(string: "https://notes.example.com/")!,
                                      servicePath: "notes/v1/")
    static let ticTacToe = APIDescription(name: "tictactoe", version: "v1",
                                          rootURL: URL(string: "https://tictactoe.example.com/")!, servicePath: "tictactoe/v1/")
}

struct Note: APIObject {
    static let kind: String? = "notes#note"
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }

    var id: String? { get { self["id"] } set { self["id"] = newValue } }
    var title: String? { get { self["title"] } set { self["title"] = newValue } }
    var body: String? { get { self["body"] } set { self["body"] = newValue } }
    var etag: String? { get { self["etag"] } set { self["etag"] = newValue } }
    var labels: [String]? { get { self["labels"] } set { self["labels"] = newValue } }
    var updated: Date? { self["updated"] }
}

struct NoteList: APICollection {
    typealias Item = Note
    static let kind: String? = "notes#noteList"
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
}

struct Game: APIObject {
    static let kind: String? = "tictactoe#game"
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    var id: String? { self["id"] }
    var board: String? { self["board"] }
}

struct Score: APIObject {
    static let kind: String? = "tictactoe#score"
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    var outcome: String? { self["outcome"] }
    var date: Date? { self["date"] }
}

/// An application's own subclass-like surrogate of Score.
struct MyScore: APIObject {
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    var outcome: String? { self["outcome"] }
    var isWin: Bool { outcome == "won" }
}

struct GameList: APICollection {
    typealias Item = Game
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
}

enum Notes {
    static func list(maxResults: Int? = nil) -> Query<NoteList> {
        var query = Query<NoteList>(api: TestAPIs.notes, name: "notes.notes.list", path: "notes")
        if let maxResults { query.parameters.set("maxResults", maxResults) }
        return query
    }

    static func get(_ id: String) -> Query<Note> {
        Query(api: TestAPIs.notes, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": id])
    }

    static func insert(_ note: Note) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.notes.insert", method: .post, path: "notes")
        query.setBody(note)
        return query
    }

    static func update(_ note: Note) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.notes.update", method: .put, path: "notes/{id}",
                                pathParameters: ["id": note.id ?? ""])
        query.setBody(note)
        query.etag = note.etag
        return query
    }

    static func patch(id: String, _ patch: Note, etag: String? = nil) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.notes.patch", method: .patch, path: "notes/{id}",
                                pathParameters: ["id": id])
        query.setBody(patch)
        query.etag = etag
        return query
    }

    static func delete(_ id: String, etag: String? = nil) -> Query<NoContent> {
        var query = Query<NoContent>(api: TestAPIs.notes, name: "notes.notes.delete", method: .delete, path: "notes/{id}",
                                     pathParameters: ["id": id])
        query.etag = etag
        return query
    }

    static func flaky(_ key: String, failures: Int, status: Int = 503, retryAfter: Int? = nil) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.flaky", path: "flaky/{key}", pathParameters: ["key": key])
        query.parameters.set("failures", failures)
        query.parameters.set("status", status)
        if let retryAfter { query.parameters.set("retryAfter", retryAfter) }
        return query
    }

    static func raw(_ path: String) -> Query<Note> {
        Query(api: TestAPIs.notes, name: "notes.\(path)", path: URITemplate(path))
    }
}

extension ServiceActor.Configuration {
    /// Sends queries to the test server, with retry waits on a virtual clock.
    static func testing(_ root: URL, clock: (any Clock<Duration>)? = nil) -> Self {
        var configuration = Self.suite()
        configuration.rootURL = root
        if let clock { configuration.clock = clock }
        return configuration
    }
}
