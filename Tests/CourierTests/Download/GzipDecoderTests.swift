@testable import Courier
import CourierTestServer
import Foundation
import Testing

/// The decoding at the end of a download of a gzip-stored object (`contentDecoding: .decoded`).
@Suite struct GzipDecoderTests {
    static func decode(_ stored: Data) throws -> Data {
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("courier-gz-\(UUID()).gz")
        let destination = source.deletingPathExtension()
        defer {
            try? FileManager.default.removeItem(at: source)
            try? FileManager.default.removeItem(at: destination)
        }
        try stored.write(to: source)
        try GzipDecoder.decode(source, to: destination)
        return try Data(contentsOf: destination)
    }

    /// Every member (RFC 1952 §2.2): the decoder used to stop at the first one's end, so a
    /// file of two members lost its second silently.
    @Test func everyMemberIsDecoded() throws {
        let text = TestServer.codedText
        let half = text.count / 2
        #expect(try Self.decode(Gzip.compress(text.prefix(half)) + Gzip.compress(text.dropFirst(half))) == text)
        #expect(try Self.decode(Gzip.compress(text)) == text)
    }

    @Test func storedDataThatStopsEarlyIsRefused() throws {
        let gzip = Gzip.compress(TestServer.codedText)
        #expect(throws: TransportError.protocolError) { try Self.decode(gzip.prefix(gzip.count / 2)) }
        #expect(throws: TransportError.protocolError) { try Self.decode(gzip.prefix(gzip.count - 4)) } // its length missing
        var corrupt = gzip
        corrupt[corrupt.startIndex + 100] ^= 0x55
        #expect(throws: TransportError.protocolError) { try Self.decode(corrupt) }
    }
}
