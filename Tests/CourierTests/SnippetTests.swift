import Foundation
import Testing

/// Every snippet under `Snippets/` is a documented example; each must run to completion.
@Suite struct SnippetTests {
    static let snippets = ["SendRequests", "StreamAndDownload", "LoopExecutor", "NotesQueries", "TestingWithMocks", "Authorizers", "Batches"]

    @Test(arguments: snippets)
    func snippetRuns(name: String) throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            Issue.record("snippet \(name) was not built at \(binary.path)")
            return
        }
        let process = Process()
        process.executableURL = binary
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // A snippet that does not finish is a failure, not a hung suite.
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            process.terminate()
            Issue.record("\(name) did not finish within 120 s")
        }
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(name) failed: \(stderr)")
    }
}
