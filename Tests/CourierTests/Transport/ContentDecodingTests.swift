@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Coded bodies Courier decodes itself (it offers `deflate, gzip`), against the raw fault
/// server's exact bytes. libcurl's decoding (7.88.1 and 8.14.1) returned a gzip stream cut
/// halfway, in a response whose framing was complete, as a whole body: `send` answered 200
/// with 116,328 of 248,902 bytes (curl's CLI, the same library, did the same and exited 0).
@Suite struct ContentDecodingTests {
    @Test(arguments: ["/gzip-cut", "/gzip-cut-chunked"])
    func aGzipStreamThatStopsHalfwayFailsEveryWayItIsRead(path: String) async throws {
        try await withServerAndService { server, service in
            let error = await #expect(throws: TransportError.protocolError) { try await service.send(HTTPRequest(url: server.faultURL(path))) }
            #expect(error?.message.contains("ended before its end") == true, "\(String(describing: error))")
            // A stream: its head arrives, then the sequence throws instead of ending.
            let stream = try await service.stream(HTTPRequest(url: server.faultURL(path)))
            #expect(stream.status == 200)
            await #expect(throws: TransportError.protocolError) {
                for try await _ in stream.body {}
            }
        }
    }

    @Test(arguments: ["/gzip-whole", "/gzip-members", "/gzip-padded", "/deflate-zlib", "/deflate-raw"])
    func wholeBodiesDecode(path: String) async throws {
        try await withServerAndService { server, service in
            let response = try await service.send(HTTPRequest(url: server.faultURL(path)))
            #expect(response.status == 200)
            #expect(response.body == TestServer.codedText, "\(path): \(response.body.count) bytes")
            let stream = try await service.stream(HTTPRequest(url: server.faultURL(path)))
            var streamed = Data()
            for try await chunk in stream.body { streamed.append(chunk) }
            #expect(streamed == TestServer.codedText, "\(path), streamed")
        }
    }

    @Test(arguments: ["/gzip-corrupt", "/brotli"])
    func corruptOrUnofferedCodingsAreProtocolErrors(path: String) async throws {
        try await withServerAndService { server, service in
            await #expect(throws: TransportError.protocolError) { try await service.send(HTTPRequest(url: server.faultURL(path))) }
        }
    }

    /// The body limit counts decoded bytes: a small coded body cannot fill memory.
    @Test func theBodyLimitCountsDecodedBytes() async throws {
        try await withServerAndService(configure: { $0.transport.maxResponseBodySize = 100_000 }) { server, service in
            await #expect(throws: TransportError.bodyTooLarge) { try await service.send(HTTPRequest(url: server.faultURL("/gzip-whole"))) }
        }
    }

    /// The decoder alone, fed the same bytes in every split: the same text, and complete only at the end.
    /// Each coding: gzip, and deflate with zlib's wrapper and raw (whose first byte alone does
    /// not tell the two apart).
    @Test(arguments: [(ContentDecoder.Coding.gzip, 16 + 15), (.deflate, 15), (.deflate, -15)] as [(ContentDecoder.Coding, Int32)])
    func anyChunkingDecodesTheSame(coding: ContentDecoder.Coding, windowBits: Int32) throws {
        let text = TestServer.codedText
        let gzip = Gzip.compress(text, windowBits: windowBits)
        for size in [1, 2, 7, 4096, 16384, gzip.count] {
            let decoder = try ContentDecoder(coding)
            var out = Data()
            var start = gzip.startIndex
            while start < gzip.endIndex {
                let end = min(start + size, gzip.endIndex)
                #expect(decoder.isComplete == false)
                _ = try gzip[start..<end].withUnsafeBytes { bytes in
                    try decoder.decode(bytes) { out.append(contentsOf: $0); return true }
                }
                start = end
            }
            #expect(out == text, "\(coding) (\(windowBits)), chunks of \(size)")
            #expect(decoder.isComplete)
        }
    }

    @Test func aContentEncodingNamesWhatToDo() {
        #expect(ContentDecoder.decoding(of: "br") == .unsupported)
        #expect(ContentDecoder.decoding(of: "gzip, gzip") == .unsupported)
        #expect(ContentDecoder.decoding(of: "identity") == .identity)
        #expect(ContentDecoder.decoding(of: " X-GZIP ") == .decode(.gzip))
        #expect(ContentDecoder.decoding(of: "deflate, identity") == .decode(.deflate))
    }

    /// A request that names its own `Accept-Encoding` was decoded by libcurl, unchecked: with
    /// `gzip` the cut stream answered 200 with half the text, and with `zstd` a frame stopping
    /// halfway answered 200 with the blocks before the cut, each a silent cut. Now Courier decodes
    /// gzip and deflate for it as for its own offer, checked. (On the code before, these tests
    /// read 200 for both cuts, and the zstd frame cut in half 107,110 decoded bytes of 214,230.)
    @Test(arguments: ["/gzip-cut", "/gzip-cut-chunked"])
    func aRequestsOwnGzipOfferIsCheckedToo(path: String) async throws {
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.faultURL(path))
            request.headers["Accept-Encoding"] = "gzip"
            let error = await #expect(throws: TransportError.protocolError) { try await service.send(request) }
            #expect(error?.message.contains("ended before its end") == true, "\(String(describing: error))")
            var whole = HTTPRequest(url: server.faultURL("/gzip-whole"))
            whole.headers["Accept-Encoding"] = "br;q=1, gzip;q=0.5"
            let decoded = try await service.send(whole)
            #expect(decoded.body == TestServer.codedText)
        }
    }

    /// A coding the request asked for itself and Courier does not decode arrives as the server
    /// sent it, `Content-Encoding` kept, for the caller's own decoder (Go's transport and
    /// AsyncHTTPClient do the same), whole or cut: no decoder claims it complete.
    @Test(arguments: ["/zstd-whole", "/zstd-cut"])
    func aRequestsOwnOfferOfAnotherCodingArrivesAsSent(path: String) async throws {
        let frame = Zstd.rawFrame(TestServer.codedText)
        let sent = path == "/zstd-cut" ? frame.prefix(frame.count / 2) : frame
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.faultURL(path))
            request.headers["Accept-Encoding"] = "zstd"
            let response = try await service.send(request)
            #expect(response.headers["Content-Encoding"] == "zstd")
            #expect(response.body == sent, "\(path): \(response.body.count) bytes, \(sent.count) sent")
            let stream = try await service.stream(request)
            var streamed = Data()
            for try await chunk in stream.body { streamed.append(chunk) }
            #expect(streamed == sent, "\(path), streamed")
            // Courier's own offer does not name zstd: the same answer to it is an error.
            await #expect(throws: TransportError.protocolError) { try await service.send(HTTPRequest(url: server.faultURL(path))) }
        }
    }
}
