import Courier
import Foundation

/// Hand-written models of the test server's Notes and TicTacToe APIs, as an application would write them.
package enum TestAPIs {
    package static let notes = APIDescription(name: "notes", version: "v1", rootURL: URL(string: "https://notes.example.com/")!,
                                      servicePath: "notes/v1/")
    package static let ticTacToe = APIDescription(name: "tictactoe", version: "v1",
                                          rootURL: URL(string: "https://tictactoe.example.com/")!, servicePath: "tictactoe/v1/")
}

package struct Note: APIObject {
    package static let kind: String? = "notes#note"
    package var json: JSONObject
    package var userProperties = UserProperties()
    package init(json: JSONObject = [:]) { self.json = json }

    package var id: String? { get { self["id"] } set { self["id"] = newValue } }
    package var title: String? { get { self["title"] } set { self["title"] = newValue } }
    package var body: String? { get { self["body"] } set { self["body"] = newValue } }
    package var etag: String? { get { self["etag"] } set { self["etag"] = newValue } }
    package var labels: [String]? { get { self["labels"] } set { self["labels"] = newValue } }
    package var updated: Date? { self["updated"] }
}

package struct NoteList: APICollection {
    package typealias Item = Note
    package static let kind: String? = "notes#noteList"
    package var json: JSONObject
    package var userProperties = UserProperties()
    package init(json: JSONObject = [:]) { self.json = json }
}

package struct Game: APIObject {
    package static let kind: String? = "tictactoe#game"
    package var json: JSONObject
    package var userProperties = UserProperties()
    package init(json: JSONObject = [:]) { self.json = json }
    package var id: String? { self["id"] }
    package var board: String? { self["board"] }
}

package struct Score: APIObject {
    package static let kind: String? = "tictactoe#score"
    package var json: JSONObject
    package var userProperties = UserProperties()
    package init(json: JSONObject = [:]) { self.json = json }
    package var outcome: String? { self["outcome"] }
    package var date: Date? { self["date"] }
}

/// An application's own subclass-like surrogate of Score.
package struct MyScore: APIObject {
    package var json: JSONObject
    package var userProperties = UserProperties()
    package init(json: JSONObject = [:]) { self.json = json }
    package var outcome: String? { self["outcome"] }
    package var isWin: Bool { outcome == "won" }
}

package struct GameList: APICollection {
    package typealias Item = Game
    package var json: JSONObject
    package var userProperties = UserProperties()
    package init(json: JSONObject = [:]) { self.json = json }
}

package enum Notes {
    package static func list(maxResults: Int? = nil) -> Query<NoteList> {
        var query = Query<NoteList>(api: TestAPIs.notes, name: "notes.notes.list", path: "notes")
        if let maxResults { query.parameters.set("maxResults", maxResults) }
        return query
    }

    package static func get(_ id: String) -> Query<Note> {
        Query(api: TestAPIs.notes, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": id])
    }

    package static func insert(_ note: Note) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.notes.insert", method: .post, path: "notes")
        query.setBody(note)
        return query
    }

    package static func update(_ note: Note) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.notes.update", method: .put, path: "notes/{id}",
                                pathParameters: ["id": note.id ?? ""])
        query.setBody(note)
        query.etag = note.etag
        return query
    }

    package static func patch(id: String, _ patch: Note, etag: String? = nil) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.notes.patch", method: .patch, path: "notes/{id}",
                                pathParameters: ["id": id])
        query.setBody(patch)
        query.etag = etag
        return query
    }

    package static func delete(_ id: String, etag: String? = nil) -> Query<NoContent> {
        var query = Query<NoContent>(api: TestAPIs.notes, name: "notes.notes.delete", method: .delete, path: "notes/{id}",
                                     pathParameters: ["id": id])
        query.etag = etag
        return query
    }

    package static func flaky(_ key: String, failures: Int, status: Int = 503, retryAfter: Int? = nil) -> Query<Note> {
        var query = Query<Note>(api: TestAPIs.notes, name: "notes.flaky", path: "flaky/{key}", pathParameters: ["key": key])
        query.parameters.set("failures", failures)
        query.parameters.set("status", status)
        if let retryAfter { query.parameters.set("retryAfter", retryAfter) }
        return query
    }

    package static func raw(_ path: String) -> Query<Note> {
        Query(api: TestAPIs.notes, name: "notes.\(path)", path: URITemplate(path))
    }
}

extension ServiceActor.Configuration {
    /// Sends queries to the test server, with retry waits on a virtual clock.
    package static func testing(_ root: URL, clock: (any Clock<Duration>)? = nil) -> Self {
        var configuration = Self.suite()
        configuration.queries.rootURL = root
        if let clock { configuration.testing.clock = clock }
        return configuration
    }
}
