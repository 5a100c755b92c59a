// A client swift-openapi-generator made (Tests/OpenAPINotes, from the test server's Notes API),
// over CourierTransport: retries, credentials, logs and cancellation from Courier's pipeline.
import Courier
import CourierOpenAPI
import CourierTestServer
import Foundation
import OpenAPINotes

let server = try await TestServer.start() // stands in for your API

try await withService { service in
    var configuration = CourierTransport.Configuration()
    configuration.idempotentOperations = ["insertNote"] // the note's ID is ours: inserting twice is harmless
    let client = Client(serverURL: server.baseURL, transport: CourierTransport(service: service, configuration: configuration))

    let inserted = try await client.insertNote(body: .json(.init(id: "snippet-1", title: "From OpenAPI"))).ok.body.json
    print("inserted", inserted.id ?? "", "etag", inserted.etag ?? "")

    // A flaky GET: two 503s, retried by the service's rules, then the note.
    let flaky = try await client.getFlakyNote(path: .init(key: "snippet"), query: .init(failures: 2)).ok.body.json
    print(flaky.title ?? "")

    // Calls inside withRequestID are named for service.cancel(requestID:), logs and events.
    let page = try await CourierTransport.withRequestID("listing") {
        try await client.listNotes(query: .init(maxResults: 10)).ok.body.json
    }
    print("listed", page.items?.count ?? 0)

    // A streamed download through the generated client: chunks as they arrive.
    var received = 0
    for try await chunk in try await client.downloadBytes(path: .init(count: 5_000_000)).ok.body.binary { received += chunk.count }
    print("streamed", received, "bytes")
}
await server.stop()
