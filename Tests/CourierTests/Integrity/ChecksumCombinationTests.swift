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

    /// A public entry: ranges no file holds are a typed error (`-1..<Int64.max` trapped on the
    /// distance), a range past the end says the file is shorter.
    @Test func rangesNoFileHoldsAreTypedErrors() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-checksum-range-\(getpid()).bin")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(repeating: 1, count: 100)))
        defer { try? FileManager.default.removeItem(at: file) }
        for range: Range<Int64> in [-1..<Int64.max, Int64.min..<0, -5..<5] {
            #expect(throws: UploadError.invalidParameters, "\(range)") { try Checksums.of(file: file, range: range) }
        }
        #expect(throws: UploadError.fileChanged) { try Checksums.of(file: file, range: 50..<Int64.max) }
        #expect(try Checksums.of(file: file, range: 10..<20).byteCount == 10)
    }
}
