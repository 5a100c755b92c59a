@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

/// CRC32C combination: the checksum of pieces hashed apart equals the checksum of the whole.
@Suite struct ChecksumCombinationTests {
    @Test func piecesCombineIntoTheWhole() {
        let bytes = Data(TestPattern.bytes(count: 1_000_003))
        let whole = ChecksumAccumulator()
        whole.update(bytes)
        let expected = whole.finish()
        for cuts in [[0], [1], [500_000], [1, 2, 999_999], [123_457, 654_321, 800_000]] {
            var pieces: [Checksums] = []
            var start = 0
            for end in cuts + [bytes.count] {
                let piece = ChecksumAccumulator(md5: false)
                piece.update(bytes[start..<end])
                pieces.append(piece.finish())
                start = end
            }
            let combined = Checksums.concatenating(pieces)
            #expect(combined.crc32c == expected.crc32c, "cuts \(cuts)")
            #expect(combined.byteCount == expected.byteCount)
            #expect(combined.md5 == nil)
        }
    }
}
