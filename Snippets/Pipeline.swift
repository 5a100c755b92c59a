// The one request pipeline: retries by Google's rules and idempotency, raw requests that opt in,
// cancellation by request ID, events and the exact request a query sends.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start() // stands in for your API: it can inject faults
server.notes.seed(count: 1)

var configuration = ServiceActor.Configuration()
configuration.queries.rootURL = server.baseURL                          // the Notes API of the test server
configuration.retry = RetryPolicy(initialDelay: 0.01...0.05)    // Google's rules, shorter waits for the demo

try await withService(configuration: configuration) { service in
    let events = Task { for await event in service.events { print("event:", event) } }

    // A GET answered 503 twice is retried (idempotent, transient); a POST would not be re-sent
    // once it may have reached the server, unless declared idempotent or made conditional.
    var busy = HTTPRequest(url: server.url("/notes/v1/notes/note-0001"), headers: ["X-Courier-Fault": "503x2"])
    busy.headers["Accept"] = "application/json"
    let retried = try await service.send(busy, options: RequestOptions(retry: configuration.retry))
    print("after retries:", retried.status)

    var order = HTTPRequest(method: .post, url: server.url("/echo"), body: .data(Data(#"{"id":"order-1"}"#.utf8)))
    order.idempotency = .always // the server dedups on the client-chosen id: safe to repeat
    print("declared idempotent:", order.isIdempotent)

    // Any operation can be cancelled by the ID it runs under.
    let stalled = Task {
        try await service.send(HTTPRequest(url: server.url("/delay/30000")), options: RequestOptions(requestID: "slow-report"))
    }
    try await Task.sleep(for: .milliseconds(100))
    await service.cancel(requestID: "slow-report")
    do { _ = try await stalled.value } catch is CancellationError { print("cancelled by ID") }

    // The exact request a query would send, to hand to another client.
    var get = Query<GenericObject>(api: APIDescription(name: "notes", version: "v1", rootURL: server.baseURL,
                                                       servicePath: "notes/v1/"),
                                   name: "notes.get", path: "notes/{id}", pathParameters: ["id": "note-0001"])
    get.fields = "id,title"
    let request = try await service.request(for: get)
    print("would send:", request)
    events.cancel()
}
await server.stop()
