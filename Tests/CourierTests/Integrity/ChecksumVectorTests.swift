@testable import Courier
import Foundation
import Testing

/// CRC32C against the vectors RFC 3720 publishes (Appendix B.4, iSCSI's CRC32C, the one Cloud
/// Storage uses), whole and fed in uneven pieces, and combined from pieces hashed apart.
@Suite struct ChecksumVectorTests {
    static let vectors: [(name: String, bytes: [UInt8], crc32c: UInt32)] = [
        ("32 bytes of zeros", [UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ("32 bytes of ones", [UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ("32 incrementing bytes", (0..<32).map { UInt8($0) }, 0x46DD_794E),
        ("32 decrementing bytes", (0..<32).map { UInt8(31 - $0) }, 0x113F_DB5C),
        ("an iSCSI read command PDU", [
            0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
            0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ], 0xD996_3A56),
    ]

    @Test func rfc3720Vectors() {
        for vector in Self.vectors {
            let whole = ChecksumAccumulator()
            whole.update(Data(vector.bytes))
            #expect(whole.finish().crc32c == vector.crc32c, "\(vector.name)")
            // Pieces of 1, 3 and 7 bytes: the byte-at-a-time tail and the 8-byte loop meet everywhere.
            for size in [1, 3, 7] {
                let pieces = ChecksumAccumulator()
                var index = 0
                while index < vector.bytes.count {
                    let end = min(index + size, vector.bytes.count)
                    pieces.update(Data(vector.bytes[index..<end]))
                    index = end
                }
                #expect(pieces.finish().crc32c == vector.crc32c, "\(vector.name) in pieces of \(size)")
            }
        }
    }
}
