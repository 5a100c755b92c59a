@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// A streamed body that declares its length must yield exactly that many bytes (issue 50). curl
/// stops reading at the declared length and completes the request, so before this a stream with
/// one byte too many arrived cut and got its 200 whenever the extra byte came late: the buffer now
/// keeps the body's last byte back until the stream has ended.
@Suite struct StreamBodyLengthTests {
    enum Extra: String, CaseIterable, Sendable {
        /// The extra byte alone, in a chunk of its own after the declared length.
        case aloneInItsOwnChunk
        /// The extra byte inside the last chunk.
        case insideTheLastChunk
        /// One byte short: the stream ends before its length.
        case oneByteShort
    }

    /// `length` bytes of the test pattern in 64 KiB chunks, changed as `extra` says.
    static func chunks(length: Int, extra: Extra) -> AsyncStream<Data> {
        let bytes = Data(TestPattern.bytes(count: length + 1))
        return AsyncStream { continuation in
            let end = extra == .oneByteShort ? length - 1 : length
            for start in stride(from: 0, to: end, by: 64 << 10) {
                var upper = min(start + (64 << 10), end)
                if extra == .insideTheLastChunk, upper == end { upper += 1 }
                continuation.yield(bytes.subdata(in: start..<upper))
            }
            if extra == .aloneInItsOwnChunk { continuation.yield(bytes.subdata(in: length..<(length + 1))) }
            continuation.finish()
        }
    }

    /// 100 times each, through raw `send`: a typed length-mismatch error every time, and the
    /// server stores nothing (it never saw the body's last byte).
    @Test(arguments: [64 << 10, 4 << 20], Extra.allCases)
    func aStreamThatContradictsItsLengthFailsEveryTime(length: Int, extra: Extra) async throws {
        try await withServerAndService { server, service in
            for attempt in 0..<100 {
                let name = "mismatch-\(length)-\(extra.rawValue)-\(attempt)"
                let request = HTTPRequest(method: .post, url: server.url("/upload/files/v1/files?uploadType=media&name=\(name)"),
                                          body: .stream(Self.chunks(length: length, extra: extra), length: Int64(length)))
                do {
                    let response = try await service.send(request)
                    Issue.record("attempt \(attempt): answered \(response.status) for a body of the wrong length")
                } catch let error as TransportError {
                    #expect(error == .bodyLengthMismatch, "attempt \(attempt): \(error)")
                    #expect(error.message.contains("declared \(length) bytes"), "\(error.message)")
                }
                #expect(server.files.contents(named: name) == nil, "attempt \(attempt): the server stored a cut body")
            }
            await expectNoLeaks(service)
        }
    }

    /// The exact length goes through whole, in chunks of any size, the last byte included.
    @Test(arguments: [1, 64 << 10, (4 << 20) + 3])
    func aStreamOfItsDeclaredLengthArrivesWhole(length: Int) async throws {
        try await withServerAndService { server, service in
            let bytes = Data(TestPattern.bytes(count: length))
            let chunks = AsyncStream<Data> { continuation in
                for start in stride(from: 0, to: length, by: 100_000) {
                    continuation.yield(bytes.subdata(in: start..<min(start + 100_000, length)))
                }
                continuation.finish()
            }
            let request = HTTPRequest(method: .post, url: server.url("/upload/files/v1/files?uploadType=media&name=exact-\(length)"),
                                      body: .stream(chunks, length: Int64(length)))
            let response = try await service.send(request)
            #expect(response.status == 200)
            #expect(server.files.contents(named: "exact-\(length)") == bytes)
        }
    }

    /// An empty stream that declares zero bytes sends none; one that yields a byte fails.
    @Test func aZeroLengthStream() async throws {
        try await withServerAndService { server, service in
            let empty = HTTPRequest(method: .put, url: server.url("/upload"),
                                    body: .stream(AsyncStream<Data> { $0.finish() }, length: 0))
            let response = try await service.send(empty)
            #expect(response.status == 200)
            let oneByte = HTTPRequest(method: .put, url: server.url("/upload"),
                                      body: .stream(AsyncStream<Data> { $0.yield(Data([1])); $0.finish() }, length: 0))
            await #expect(throws: TransportError.bodyLengthMismatch) { try await service.send(oneByte) }
        }
    }
}
