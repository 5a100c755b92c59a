// Batches: many queries, one result each — as concurrent queries or as one wire request.
import Courier
import CourierTestServer
import Foundation

struct Note: APIObject {
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    var title: String? { self["title"] }
}

let server = try await TestServer.start()
server.notes.seed(count: 150)
let api = APIDescription(name: "notes", version: "v1", rootURL: URL(string: "https://notes.example.com/")!,
                         servicePath: "notes/v1/")  // batchPath: batch/notes/v1
func get(_ index: Int) -> Query<Note> {
    Query(api: api, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": String(format: "note-%04d", index)])
}

var configuration = ServiceActor.Configuration()
configuration.queries.rootURL = server.baseURL
configuration.limits.maxConcurrentQueries = 8   // never more than 8 at the backend, service-wide

try await withService(configuration: configuration) { service in
    // Many raw requests, 16 in flight, results as they complete: no task per request.
    let requests = (1...100).map { HTTPRequest(url: server.baseURL.appendingPathComponent(String(format: "notes/v1/notes/note-%04d", $0))) }
    var ok = 0
    for await (_, result) in service.sendAll(requests, maxInFlight: 16) where (try? result.get().status) == 200 { ok += 1 }
    print("sendAll:", ok, "of", requests.count, "answered 200")

    // A task-group batch: queries of any types, 10 at a time, a completion handler for one of them.
    let first = get(1)
    let missing = Query<Note>(api: api, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": "nope"])
    var batch = QueryBatch(first, missing)
    batch.add(get(2)) { result in print("note 2 arrived:", (try? result.get().title) ?? "error") }
    let results = try await service.batch(batch)
    print("first:", try results.value(for: first).title ?? "", "| failures:", results.failures.count)

    // The same as results arrive.
    for try await (requestID, result) in service.batchResults(QueryBatch(get(3), get(4))) {
        print(requestID, (try? result.get()) != nil ? "ok" : "failed")
    }

    // Google's wire batch: 150 queries in 2 HTTP requests (100 per request).
    var wire = QueryBatch()
    for index in 1...150 { wire.add(get(index)) }
    let before = server.counters.requests
    let wireResults = try await service.executeBatch(wire)
    print("wire batch:", wireResults.successes.count, "results in", server.counters.requests - before, "requests")
}
await server.stop()
