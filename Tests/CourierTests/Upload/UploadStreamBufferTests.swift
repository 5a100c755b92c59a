@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// The read-ahead buffer of a streamed upload: bounded, addressed by stream offset, releasing
/// acknowledged bytes (and dropping bytes a resumed server already holds) with their CRC32C.
@Suite struct UploadStreamBufferTests {
    static func pattern(_ count: Int, offset: Int = 0) -> Data { Data(TestPattern.bytes(count: count, offset: offset)) }

    @Test func theProducerWaitsWhileFullAndTheConsumerSeesRanges() async throws {
        let buffer = UploadStreamBuffer(start: 0, capacity: 100)
        let producer = Task {
            for index in 0..<10 { try await buffer.append(Self.pattern(30, offset: index * 30)) }
            buffer.finish()
        }
        let (available, ended) = try await buffer.fill(through: 90)
        #expect(available >= 90 && available <= 120 && !ended) // capacity holds it back
        #expect(try buffer.bytes(10..<70) == Self.pattern(60, offset: 10))
        buffer.release(before: 60)
        #expect(buffer.start == 60)
        let all = try await buffer.fill(through: 301)
        #expect(all == (300, true))
        #expect(try buffer.bytes(250..<300) == Self.pattern(50, offset: 250))
        #expect(throws: UploadError.protocolViolation) { try buffer.bytes(0..<10) } // released
        try await producer.value
        buffer.release(before: 300)
        let crc = ChecksumAccumulator(md5: false)
        crc.update(Self.pattern(300))
        #expect(buffer.acknowledgedCRC32C == crc.finish().crc32c)
    }

    @Test func releasingPastWhatWasReadDropsTheBytesAsTheyArrive() async throws {
        // A resumed stream starts at 1,000; the server already holds up to 1,050.
        let before = ChecksumAccumulator(md5: false)
        before.update(Self.pattern(1000))
        let buffer = UploadStreamBuffer(start: 1000, crc32cBeforeStart: before.finish().crc32c, capacity: 1000)
        buffer.release(before: 1050)
        try await buffer.append(Self.pattern(80, offset: 1000))
        buffer.finish()
        #expect(try await buffer.fill(through: 2000) == (1080, true))
        #expect(try buffer.bytes(1050..<1080) == Self.pattern(30, offset: 1050))
        buffer.release(before: 1080)
        let whole = ChecksumAccumulator(md5: false)
        whole.update(Self.pattern(1080))
        #expect(buffer.acknowledgedCRC32C == whole.finish().crc32c)
    }

    @Test func aFailingStreamAndCancellationReachTheConsumer() async throws {
        struct Broken: Error {}
        let buffer = UploadStreamBuffer(start: 0, capacity: 10)
        buffer.finish(throwing: Broken())
        await #expect(throws: Broken.self) { try await buffer.fill(through: 5) }

        let waiting = UploadStreamBuffer(start: 0, capacity: 10)
        let consumer = Task { try await waiting.fill(through: 5) }
        try await Task.sleep(for: .milliseconds(20))
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
    }
}
