import CCurl // malloc_usable_size
@testable import Courier
import Foundation
import Testing

@Suite struct BufferedBodyTests {
    private static func chunk(_ text: String, into body: inout BufferedBody) {
        Array(text.utf8).withUnsafeBytes { body.append($0) }
    }

    @Test func chunksArriveWholeAndInOrderThroughGrowth() {
        var body = BufferedBody()
        var expected = Data()
        // Enough chunks of uneven sizes to grow the buffer several times from nothing.
        for index in 0..<200 {
            let text = String(repeating: Character(UnicodeScalar(UInt8(97 + index % 26))), count: 1 + index * 7 % 300)
            Self.chunk(text, into: &body)
            expected.append(contentsOf: text.utf8)
        }
        // (Read into locals: #expect cannot look into a non-copyable value.)
        let count = body.count, capacity = body.capacity
        #expect(count == expected.count)
        #expect(capacity >= count)
        let data = body.take()
        #expect(data == expected)
    }

    @Test func aReservedContentLengthIsFilledWithoutGrowing() {
        var body = BufferedBody()
        body.reserve(1_000)
        let reserved = body.capacity
        #expect(reserved >= 1_000)
        for _ in 0..<10 { Self.chunk(String(repeating: "x", count: 100), into: &body) }
        let capacity = body.capacity
        #expect(capacity == reserved)
        let data = body.take()
        #expect(data == Data(repeating: UInt8(ascii: "x"), count: 1_000))
    }

    @Test func takingLeavesItEmptyAndReadyForMore() {
        var body = BufferedBody()
        Self.chunk("first", into: &body)
        let first = body.take()
        let emptied = body.isEmpty && body.capacity == 0
        #expect(emptied)
        Self.chunk("second", into: &body)
        let second = body.take()
        #expect(second == Data("second".utf8))
        #expect(first == Data("first".utf8)) // the first buffer is the first Data's, not reused
    }

    @Test func anEmptyBodyIsEmptyDataAndEmptyChunksChangeNothing() {
        var body = BufferedBody()
        let nothing = body.take()
        #expect(nothing.isEmpty)
        body.reserve(64) // a Content-Length whose bytes never came
        Data().withUnsafeBytes { body.append($0) }
        let stillEmpty = body.isEmpty
        #expect(stillEmpty)
        let reservedOnly = body.take()
        #expect(reservedOnly.isEmpty)
    }

    @Test func slackFromGrowingIsCutBeforeTheBodyIsHandedOver() {
        var body = BufferedBody()
        body.reserve(64 * 1024) // a Content-Length that overstated the body
        // 100 bytes: more than Data keeps inline, so the Data below is a view of the buffer itself.
        let text = String(repeating: "s", count: 100)
        Self.chunk(text, into: &body)
        let capacity = body.capacity
        #expect(capacity >= 64 * 1024)
        let data = body.take()
        #expect(data == Data(text.utf8))
        // The Data owns the buffer now, cut to (malloc's rounding of) the body's size.
        let owned = data.withUnsafeBytes { malloc_usable_size(UnsafeMutableRawPointer(mutating: $0.baseAddress!)) }
        #expect(owned < 1024)
    }
}
