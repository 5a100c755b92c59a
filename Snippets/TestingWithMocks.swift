// Testing code that uses Courier without a network: the whole query pipeline runs against
// canned responses, and retries wait on a virtual clock.
import Courier
import CourierTesting
import Foundation

struct Note: APIObject {
    var json: JSONObject
    var userProperties = UserProperties()
    init(json: JSONObject = [:]) { self.json = json }
    var title: String? { get { self["title"] } set { self["title"] = newValue } }
}

let api = APIDescription(name: "notes", version: "v1", rootURL: URL(string: "https://notes.example.com/")!,
                         servicePath: "notes/v1/")
let get = Query<Note>(api: api, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": "n1"])

// 1. A service that answers one faked object (GTLR's mockServiceWithFakedObject).
var faked = Note()
faked.title = "From the mock"
let mockService = try ServiceActor.mock(answering: faked)
print(try await mockService.execute(get).title ?? "")
await mockService.shutdown()

// 2. Scripted responses per route, recorded requests, and retries on a virtual clock.
let transport = MockTransport()
transport.on(.get, path: "/notes/v1/notes/n1", sequence: [
    try .googleError(status: 503, message: "try later"),
    try .json(["id": "n1", "title": "Second time lucky"]),
])
let clock = VirtualClock()
var configuration = ServiceActor.Configuration()
configuration.testing.handler = transport.handler
configuration.testing.clock = clock
try await withService(configuration: configuration) { service in
    let note = try await service.execute(get)
    print(note.title ?? "", "after", transport.requests.count, "requests; waited", clock.sleeps, "(virtually)")
    print("URL built:", transport.requests[0].url.absoluteString)
}
