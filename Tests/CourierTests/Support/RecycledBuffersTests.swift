@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// Response buffers go back to the loop when a response is released (see
/// Docs/Performance.md): reused, never while a response still holds them, and bounded.
@Suite struct RecycledBuffersTests {
    @Test func aGivenBufferIsTheNextOneTaken() {
        let buffers = RecycledBuffers(largest: 4096, retainedLimit: 64 * 1024)
        let first = buffers.take(atLeast: 1000)
        #expect(RecycledBuffers.capacity(of: first) >= 1000)
        buffers.give(first)
        #expect(buffers.retainedByteCount == RecycledBuffers.capacity(of: first))
        let second = buffers.take(atLeast: 500)
        #expect(second == first)
        #expect(buffers.retainedByteCount == 0)
        buffers.give(second)
    }

    @Test func aBufferTooSmallForTheRequestIsGrown() {
        let buffers = RecycledBuffers(largest: 64 * 1024, retainedLimit: 256 * 1024)
        buffers.give(buffers.take(atLeast: 100))
        let grown = buffers.take(atLeast: 10_000)
        #expect(RecycledBuffers.capacity(of: grown) >= 10_000)
        grown.initializeMemory(as: UInt8.self, repeating: 7, count: 10_000) // writable to its end (ASan checks)
        #expect(buffers.retainedByteCount == 0)
        buffers.give(grown)
    }

    @Test func largeBuffersAndThoseOverTheLimitAreFreedNotKept() {
        let buffers = RecycledBuffers(largest: 2048, retainedLimit: 4096)
        buffers.give(buffers.take(atLeast: 10_000)) // larger than `largest`
        #expect(buffers.retainedByteCount == 0)
        let kept = (0..<4).map { _ in buffers.take(atLeast: 1500) }
        for buffer in kept { buffers.give(buffer) }
        // Two of the four fit, the first two given. Each one's capacity is its own: malloc may
        // hand out a chunk a little larger than another of the same request (3,040 against
        // 2 × 1,528 once, in the parallel suite).
        #expect(buffers.retainedByteCount == RecycledBuffers.capacity(of: kept[0]) + RecycledBuffers.capacity(of: kept[1]))
        while buffers.retainedByteCount > 0 { free(buffers.take(atLeast: 1)) }
    }

    /// The promise that matters: a response kept by its caller is never written over by later
    /// responses, whose buffers come from the same recycler.
    @Test func aKeptResponseOutlivesTheResponsesAfterIt() async throws {
        try await withServerAndService { server, service in
            let kept = try await service.send(HTTPRequest(url: server.url("/echo?kept=\(String(repeating: "k", count: 300))")))
            let body = [UInt8](kept.body)
            let headers = kept.headers.map { "\($0.name): \($0.value)" }
            #expect(body.count > 300)
            for round in 0..<40 {
                let path = round.isMultiple(of: 2) ? "/bytes/\(200 + round * 50)" : "/echo?round=\(round)"
                let other = try await service.send(HTTPRequest(url: server.url(path)))
                #expect(other.status == 200)
            }
            let bodyKept = [UInt8](kept.body) == body
            #expect(bodyKept, "the kept response's body was written over")
            #expect(kept.headers.map { "\($0.name): \($0.value)" } == headers)
            #expect(kept.headers["Content-Length"] == "\(body.count)")
        }
    }
}
