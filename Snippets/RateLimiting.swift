// Quota-aware adaptive rate limiting: the client believes 100 requests/s, the server's quota is
// 20/s (429 RESOURCE_EXHAUSTED beyond). The limit finds the quota and no query fails.
import Courier
import CourierTestServer
import Foundation

let server = try await TestServer.start() // stands in for your API: its quota is the `quota-20` fault
server.notes.seed(count: 1)
let notes = APIDescription(name: "notes", version: "v1", rootURL: server.baseURL, servicePath: "notes/v1/")

/// Marks every request for the test server's quota of 20 per second.
struct QuotaTag: Authorizer {
    func authorize(_ request: inout HTTPRequest) async throws { request.headers["X-Courier-Fault"] = "quota-20" }
    func invalidate(_ rejected: HTTPRequest) async {}
}

var configuration = ServiceActor.Configuration(authorizer: QuotaTag())
// One limit per API, as Google counts quotas; adaptive by default.
configuration.limits.rateLimits = RateLimits(.perSecond(100), scope: .api)

try await withService(configuration: configuration) { service in
    let events = Task {
        for await event in service.events {
            if case .rateLimitChanged(let key, let rate, let queued, let throttled) = event {
                print(String(format: "%@: %.1f requests/s (%@), %d queued", key, rate, throttled ? "throttled" : "step up", queued))
            }
        }
    }
    let get = Query<GenericObject>(api: notes, name: "notes.get", path: "notes/{id}", pathParameters: ["id": "note-0001"])
    let failed = try await withThrowingTaskGroup(of: Bool.self) { group in
        for _ in 0..<100 { group.addTask { (try? await service.execute(get)) == nil } }
        var failed = 0
        for try await failure in group where failure { failed += 1 }
        return failed
    }
    for status in service.rateLimitStatus() {
        print("\(status.key): \(Int(status.requestsPerSecond)) requests/s now, \(status.throttled) throttled answers, \(failed) failed queries")
    }
    let windows = server.quotas.windows("quota-20").map { "\($0.accepted)+\($0.refused)" }
    print("per second at the server (accepted+refused):", windows.joined(separator: " "))
    events.cancel()
}
await server.stop()
