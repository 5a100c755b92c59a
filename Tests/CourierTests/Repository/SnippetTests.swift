import Foundation
import CourierTestSupport
import Testing

/// Every snippet under `Snippets/` is a documented example; each must run to completion.
@Suite struct SnippetTests {
    static let snippets = ["SendRequests", "StreamAndDownload", "LoopExecutor", "NotesQueries", "TestingWithMocks", "Authorizers", "Batches", "Uploads", "Pipeline", "RateLimiting", "CircuitBreaking", "Caching", "TracingSpans", "OpenAPIClient", "SignedURLs"]

    @Test(arguments: snippets)
    func snippetRuns(name: String) async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            Issue.record("snippet \(name) was not built at \(binary.path)")
            return
        }
        // A snippet that does not finish within two minutes is terminated and fails.
        let run = try await runProcess(binary, [], timeout: 120)
        #expect(run.status == 0, "\(name) failed: \(run.error)")
    }
}
