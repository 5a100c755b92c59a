// Send requests with Courier: one service, `send`, cancellation through the task.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start() // stands in for your API

try await withService { service in
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
await server.stop()
