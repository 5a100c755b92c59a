// Typed queries against a Google-style JSON API (the embedded test server's Notes API):
// CRUD, partial responses, ETags, patches with explicit nulls, paging, errors and retries; and a
// path template expanded on its own.
import Courier
import CourierTestServer
import Foundation

struct Note: APIObject {
    static let kind: String? = "notes#note"
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    var id: String? { get { self["id"] } set { self["id"] = newValue } }
    var title: String? { get { self["title"] } set { self["title"] = newValue } }
    var body: String? { get { self["body"] } set { self["body"] = newValue } }
    var etag: String? { self["etag"] }
}

struct NoteList: APICollection {
    typealias Item = Note
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
}

let notesAPI = APIDescription(name: "notes", version: "v1", rootURL: URL(string: "https://notes.example.com/")!,
                              servicePath: "notes/v1/")

let server = try await TestServer.start()
server.notes.seed(count: 42)
var configuration = ServiceActor.Configuration()
configuration.queries.rootURL = server.baseURL // point the API at the local server
configuration.queries.applicationName = "NotesSnippet/1.0"

try await withService(configuration: configuration) { service in
    // Insert, then read back with a partial response.
    var draft = Note()
    draft.title = "Groceries"
    draft.body = "milk, eggs"
    var insert = Query<Note>(api: notesAPI, name: "notes.notes.insert", method: .post, path: "notes")
    insert.setBody(draft)
    let created = try await service.execute(insert)
    print("created", created.id ?? "?", created.etag ?? "")

    var get = Query<Note>(api: notesAPI, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": created.id!])
    get.fields = "id,title"
    print("partial:", try await service.execute(get).jsonString)

    // Patch only what changed; removing `body` sends an explicit null, which clears it.
    var modified = created
    modified.title = "Groceries (Saturday)"
    modified.body = nil
    var patch = Query<Note>(api: notesAPI, name: "notes.notes.patch", method: .patch, path: "notes/{id}",
                            pathParameters: ["id": created.id!])
    patch.setBody(Note.patch(from: created, to: modified))
    patch.etag = created.etag // If-Match: a concurrent change answers 412
    let patched = try await service.execute(patch)
    print("patched:", patched.title ?? "", "body:", patched.body ?? "<removed>")

    // Pages, lazily.
    var list = Query<NoteList>(api: notesAPI, name: "notes.notes.list", path: "notes")
    list.parameters.set("maxResults", 10)
    var pages = 0
    for try await page in service.pages(of: list) { pages += 1; _ = page.items }
    print("pages:", pages)

    // Or all at once (up to 25 pages, as in GTLR).
    list.execution.paging = .fetchAll
    print("all items:", try await service.execute(list).items.count)

    // Errors are typed; match them by status.
    do {
        _ = try await service.execute(Query<Note>(api: notesAPI, name: "notes.notes.get", path: "notes/{id}",
                                                  pathParameters: ["id": "missing"]))
    } catch APIError.notFound {
        print("no such note")
    }
}
await server.stop()

// A path template on its own: RFC 6570, all four levels, with lists and associative arrays.
let search: URITemplate = "notes{?q,label*}"
print(try search.expand(["q": "milk & eggs", "label": ["home", "weekly"]])) // notes?q=milk%20%26%20eggs&label=home&label=weekly
do {
    _ = try URITemplate(validating: "notes/{id")
} catch {
    print(error) // QueryError.invalidTemplate: an unclosed expression, with the offset where it breaks
}
