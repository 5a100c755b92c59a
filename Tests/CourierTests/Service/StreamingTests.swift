@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

@Suite struct StreamingTests {
    @Test func streamReturnsTheHeadFirstAndTheBodyInChunks() async throws {
        try await withServerAndService { server, service in
            let response = try await service.stream(HTTPRequest(url: server.url("/bytes/5000000")))
            #expect(response.status == 200)
            #expect(response.headers["Content-Length"] == "5000000")
            var hasher = TestPattern.Hasher()
            var chunks = 0
            for try await chunk in response.body {
                hasher.update(chunk)
                chunks += 1
            }
            #expect(hasher.count == 5_000_000)
            #expect(hasher.hex == TestPattern.Hasher.of(Data(TestPattern.bytes(count: 5_000_000))).hex)
            #expect(chunks > 1)
            await expectNoLeaks(service)
        }
    }

    @Test func aSlowConsumerPausesTheTransferInsteadOfBuffering() async throws {
        try await withServerAndService { server, service in
            let response = try await service.stream(HTTPRequest(url: server.url("/bytes/50000000")))
            var iterator = response.body.makeAsyncIterator()
            _ = try await iterator.next()
            // While we do not read, curl must stop at the 1 MiB high-water mark (plus one socket read).
            try await Task.sleep(for: .milliseconds(300))
            var received = 0
            while let chunk = try await iterator.next() { received += chunk.count }
            #expect(received > 0)
            await expectNoLeaks(service)
        }
    }

    @Test func droppingTheBodyEarlyCancelsTheTransfer() async throws {
        try await withServerAndService { server, service in
            do {
                let response = try await service.stream(HTTPRequest(url: server.url("/bytes/50000000")))
                var iterator = response.body.makeAsyncIterator()
                _ = try await iterator.next()
            }
            #expect(await eventually { await service.stats.liveTransfers == 0 })
            await expectNoLeaks(service)
        }
    }

    @Test func streamedBodyErrorsSurfaceInTheSequence() async throws {
        try await withServerAndService { server, service in
            let response = try await service.stream(HTTPRequest(url: server.faultURL("/reset-mid-body")))
            #expect(response.status == 200)
            await #expect(throws: TransportError.connectionLost) {
                for try await _ in response.body {}
            }
        }
    }

    @Test func collectEnforcesItsLimit() async throws {
        try await withServerAndService { server, service in
            let small = try await service.stream(HTTPRequest(url: server.url("/bytes/1000")))
            #expect(try await small.body.collect(upTo: 1000).count == 1000)
            let large = try await service.stream(HTTPRequest(url: server.url("/bytes/100000")))
            await #expect(throws: TransportError.bodyTooLarge) { try await large.body.collect(upTo: 1000) }
        }
    }

    @Test func downloadWritesSuccessBodiesToDiskAndLeavesFilesAloneOnErrors() async throws {
        try await withServerAndService { server, service in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(UUID()).bin")
            defer { try? FileManager.default.removeItem(at: file) }
            let response = try await service.send(HTTPRequest(url: server.url("/bytes/2000000")), writingBodyTo: file)
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(try Data(contentsOf: file) == Data(TestPattern.bytes(count: 2_000_000)))

            let notFound = try await service.send(HTTPRequest(url: server.url("/status/404")), writingBodyTo: file)
            #expect(notFound.status == 404)
            #expect(String(decoding: notFound.body, as: UTF8.self) == #"{"status":404}"#)
            #expect(try Data(contentsOf: file).count == 2_000_000) // untouched

            let appended = try await service.send(HTTPRequest(url: server.url("/bytes/10")), writingBodyTo: file, append: true)
            #expect(appended.status == 200)
            #expect(try Data(contentsOf: file).count == 2_000_010)
        }
    }

    /// A disk that refuses the body (/dev/full: every write fails with ENOSPC) fails the call with
    /// a typed error, never a 200 with the body missing; the connection serves the next request.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
    func aFullDiskFailsTheDownload() async throws {
        try await withServerAndService { server, service in
            let error = await #expect(throws: TransportError.fileError) {
                try await service.send(HTTPRequest(url: server.url("/bytes/2000000")), writingBodyTo: URL(fileURLWithPath: "/dev/full"))
            }
            #expect(error?.message.contains("No space left") == true, "\(String(describing: error))")
            let next = try await service.send(HTTPRequest(url: server.url("/bytes/10")))
            #expect(next.status == 200)
        }
    }

    @Test func emptySuccessfulDownloadStillCreatesTheFile() async throws {
        try await withServerAndService { server, service in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-empty-\(UUID())")
            defer { try? FileManager.default.removeItem(at: file) }
            _ = try await service.send(HTTPRequest(url: server.url("/bytes/0")), writingBodyTo: file)
            #expect(FileManager.default.fileExists(atPath: file.path))
        }
    }
}
