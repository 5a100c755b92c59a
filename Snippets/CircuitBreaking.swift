// A circuit breaker: after three failures in a row the host's circuit opens and queries fail at
// once with CircuitOpenError, so the caller can serve a fallback; a probe closes it again.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start() // answers the first four requests 503 (`503x4`), then recovers
server.notes.seed(count: 1)
let notes = APIDescription(name: "notes", version: "v1", rootURL: server.baseURL, servicePath: "notes/v1/")

struct Outage: Authorizer {
    func authorize(_ request: inout HTTPRequest) async throws { request.headers["X-Courier-Fault"] = "503x4" }
    func invalidate(_ rejected: HTTPRequest) async {}
}

var configuration = ServiceActor.Configuration(authorizer: Outage())
configuration.retry = .disabled // each failure counts once, for the demo
configuration.limits.circuitBreaker = CircuitBreakerPolicy(failureThreshold: 3, openDuration: .milliseconds(300))

try await withService(configuration: configuration) { service in
    let get = Query<GenericObject>(api: notes, name: "notes.get", path: "notes/{id}", pathParameters: ["id": "note-0001"])
    func read() async -> String {
        do {
            let note = try await service.execute(get)
            return "fresh: \(note.json["title"]?.stringValue ?? "")"
        } catch let error as CircuitOpenError {
            return "fallback (circuit open for \(error.host), probe in \(error.retryAfter.map { "\($0)" } ?? "flight"))"
        } catch {
            return "failed: \(error)"
        }
    }
    for _ in 0..<4 { print(await read()) }               // three 503s open it; the fourth never leaves
    try await Task.sleep(for: .milliseconds(350))
    print(await read())                                  // the probe meets the fourth 503: open again, longer
    try await Task.sleep(for: .milliseconds(650))
    print(await read())                                  // the next probe succeeds: closed
    print("circuit:", service.circuitState(of: "\(server.baseURL.host!):\(server.baseURL.port!)"))
}
await server.stop()
