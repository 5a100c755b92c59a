// Send requests with Courier: one service, `send`, cancellation through the task.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start() // stands in for your API

// The configuration is in sections (transport, limits, retry, auth, telemetry, json, queries,
// testing); a preset starts from a purpose: here, requests a person waits on.
var configuration = ServiceActor.Configuration.interactive
configuration.transport.timeouts.idle = .seconds(20)
configuration.limits.connections.maxConnectionsPerHost = 4

try await withService(configuration: configuration) { service in
    // A plain GET; a non-2xx status is a response, not an error.
    let response = try await service.send(HTTPRequest(url: server.url("/echo?greeting=hello")))
    print(response.status, response.headers["Content-Type"] ?? "", response.body.count, "bytes")

    // A JSON POST with a per-request deadline.
    var post = HTTPRequest(method: .post, url: server.url("/echo"), body: .data(Data(#"{"a":1}"#.utf8)))
    post.headers["Content-Type"] = "application/json"
    post.timeouts.total = .seconds(5)
    print(try await service.send(post).status)

    // Cancelling the task cancels the transfer: it leaves libcurl at once.
    let slow = Task { try await service.send(HTTPRequest(url: server.url("/delay/10000"))) }
    slow.cancel()
    do { _ = try await slow.value } catch is CancellationError { print("cancelled") }
}

// Through a proxy (the test server stands in for one as well). Without this setting the service
// takes the environment's (`https_proxy`, `no_proxy` …), read once when it starts.
var proxied = ServiceActor.Configuration()
proxied.transport.proxy = .url(server.baseURL.absoluteString, excluding: ["metadata.google.internal"])
try await withService(configuration: proxied) { service in
    // A host that resolves nowhere (.invalid): only the proxy can answer.
    let response = try await service.send(HTTPRequest(url: URL(string: "http://api.example.invalid/echo")!))
    print("through the proxy:", response.status)
}
await server.stop()
