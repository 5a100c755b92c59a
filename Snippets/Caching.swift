// The ETag cache and request coalescing: the second read of an object is a 304 served from the
// cache, and 100 identical reads at once are one request.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start(latency: .milliseconds(50)) // a server 50 ms away
server.notes.seed(count: 1)
let notes = APIDescription(name: "notes", version: "v1", rootURL: server.baseURL, servicePath: "notes/v1/")

var configuration = ServiceActor.Configuration()
configuration.queries.caching = QueryCaching(maximumBytes: 8 << 20)

try await withService(configuration: configuration) { service in
    let get = Query<GenericObject>(api: notes, name: "notes.get", path: "notes/{id}", pathParameters: ["id": "note-0001"])
    let first = try await service.execute(get)                  // 200, kept with its ETag
    let again = try await service.execute(get)                  // If-None-Match → 304 → the cached object
    print("same object:", first.json == again.json, "etag:", again.json["etag"]?.stringValue ?? "")

    let before = server.counters.requests
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<100 { group.addTask { _ = try await service.execute(get) } }
        try await group.waitForAll()
    }
    print("100 identical reads at once → \(server.counters.requests - before) request(s) at the server")

    var own = get
    own.execution.coalesced = false                             // this one wants a request of its own
    own.execution.cached = false
    _ = try await service.execute(own)
}
await server.stop()
