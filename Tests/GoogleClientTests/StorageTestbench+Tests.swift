import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension StorageTestbench {
    /// Starts the emulator with bucket `b`, runs `body` with a service whose root URL is the
    /// emulator's (short retry waits, or `configure`'s), and stops the emulator whether or not
    /// `body` throws.
    static func withEmulator<T: Sendable>(configure: (inout ServiceActor.Configuration) -> Void = { _ in },
                                         _ body: (StorageTestbench, ServiceActor) async throws -> T) async throws -> T {
        let testbench = try await StorageTestbench.start()
        testbench.createBucket("b")
        var configuration = ServiceActor.Configuration.suite()
        configuration.queries.rootURL = testbench.baseURL
        configuration.retry = RetryPolicy(maxRetries: 3, initialDelay: 0...0.005, maxDelay: .milliseconds(20))
        configure(&configuration)
        do {
            let result = try await withCheckedService(configuration: configuration) { try await body(testbench, $0) }
            await testbench.stop()
            return result
        } catch {
            await testbench.stop()
            throw error
        }
    }

    /// `POST /retry_test`: plans `instructions` per method; the test's ID goes in `x-retry-test-id`.
    func createRetryTest(_ instructions: [String: [String]], service: ServiceActor) async throws -> String {
        let body = try JSONSerialization.data(withJSONObject: ["instructions": instructions, "transport": "HTTP"])
        var request = HTTPRequest(method: .post, url: baseURL.appendingPathComponent("retry_test"), body: .data(body))
        request.headers["Content-Type"] = "application/json"
        let response = try await service.send(request)
        let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return try #require(object?["id"] as? String, "POST /retry_test answered \(response.status)")
    }
}
