@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import InMemoryTracing
import MetricsTestKit
import Synchronization
import Testing

/// Request bodies users hand `send` with sizes no file holds: each is a typed error before a
/// byte goes out, with metrics and tracing on (both read a body's length), and nothing traps.
@Suite struct HostileBodyTests {
    /// A 1,000-byte file for the bodies to name; the caller removes it.
    static func makeFile() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-hostile-body-\(UUID()).bin")
        try Data(repeating: 7, count: 1000).write(to: url)
        return url
    }

    static let count = 6

    static func bodies(_ file: URL) -> [(String, HTTPRequest.Body)] { [
        ("a range from -1 to Int64.max", .file(file, range: -1..<Int64.max)),
        ("a range from Int64.min", .file(file, range: Int64.min..<0)),
        ("a range past the end", .file(file, range: 0..<Int64.max)),
        ("parts whose lengths add past Int64.max", .parts([.file(file, range: 0..<(Int64.max / 2 + 1)), .file(file, range: 0..<(Int64.max / 2 + 1))])),
        ("a part with a negative range", .parts([.data(Data("head".utf8)), .file(file, range: -10..<10)])),
        ("a stream of negative length", .stream(AsyncStream<Data> { $0.yield(Data("x".utf8)); $0.finish() }, length: -5)),
    ] }

    @Test(arguments: 0..<count)
    func aBodyNoFileHoldsIsATypedError(index: Int) async throws {
        let file = try Self.makeFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let (name, body) = Self.bodies(file)[index]
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.telemetry.metricsFactory = TestMetrics()
            configuration.telemetry.tracer = InMemoryTracer()
            try await withCheckedService(configuration: configuration) { service in
                var request = HTTPRequest(method: .put, url: server.baseURL.appendingPathComponent("echo"))
                request.body = body
                do {
                    let response = try await service.send(request)
                    Issue.record("\(name): sent, answered \(response.status)")
                } catch let error as any CourierError {
                    #expect(!error.description.isEmpty, "\(name)")
                }
            }
        }
    }

    /// A file shortened while it is sent: the body ends before the length the request declared.
    /// Each read now checks for that; before, the short read was curl's end of the body, which
    /// sent fewer bytes than its Content-Length, and the server waited for the rest until a
    /// timeout ended the call (the test's own timeout, and a `timedOut` that named no cause).
    @Test(arguments: [false, true])
    func aFileShortenedWhileItIsSentFailsAtOnce(asPart: Bool) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-shortened-\(UUID()).bin")
        try Data(repeating: 3, count: 4 << 20).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withServerAndService(configure: { $0.transport.timeouts.total = .seconds(30) }) { server, service in
            var request = HTTPRequest(method: .put, url: server.url("/upload"))
            request.body = asPart ? .parts([.data(Data("head".utf8)), .file(file, range: 0..<(4 << 20))]) : .file(file)
            // The first report comes from the read callback, after 64 KiB: the file shrinks under
            // the transfer then, to 100 KiB.
            let shortened = Flag()
            request.progress = { progress in
                if progress.bytesSent > 0, !shortened.value.exchange(true, ordering: .relaxed) { _ = truncate(file.path, 100 << 10) }
            }
            let started = ContinuousClock.now
            let error = await #expect(throws: TransportError.bodyLengthMismatch) { try await service.send(request) }
            #expect(error?.message.contains("shortened") == true, "\(String(describing: error))")
            #expect(started.duration(to: .now) < .seconds(20), "it failed when the file ended, not at the 30 s timeout")
            let didShorten = shortened.value.load(ordering: .relaxed)
            #expect(didShorten)
        }
    }

    final class Flag: Sendable {
        let value = Atomic(false)
    }

    /// Both read a body's length before any transfer checks it (`-1..<Int64.max` trapped in `range.count`).
    @Test func itsLengthAndURLRequestNeverTrap() throws {
        let file = try Self.makeFile()
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(Self.bodies(file).count == Self.count)
        for (name, body) in Self.bodies(file) {
            if let length = body.knownLength { #expect(length >= 0, "\(name): \(length)") }
            var request = HTTPRequest(method: .put, url: try #require(URL(string: "http://127.0.0.1:9/")))
            request.body = body
            if case .file(_, let range?) = body.storage, range.lowerBound < 0 {
                #expect(throws: TransportError.self, "\(name)") { try request.makeURLRequest() }
            }
        }
    }
}
