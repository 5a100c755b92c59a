@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Automatic decompression (`Configuration.transport.automaticDecompression`, on by default):
/// the request offers what Courier decodes itself (`deflate, gzip`: ContentDecodingTests), once,
/// in the header list Courier builds (not curl's per-request `Accept-Encoding` formatting:
/// Docs/PerformanceDecisions.md), and the body arrives decoded. Against the test server, whose
/// `/gzip` always answers gzip-compressed.
@Suite struct AutomaticDecompressionTests {
    static func offers(_ echo: Echo) -> [String] {
        echo.headers.filter { $0[0].lowercased() == "accept-encoding" }.map { $0[1] }
    }

    @Test func theOfferIsWhatCourierDecodesAndGoesOutOnce() async throws {
        #expect(ContentDecoder.offer == "deflate, gzip")
        try await withServerAndService { server, service in
            var withHeaders = HTTPRequest(url: server.url("/echo"))
            withHeaders.headers["X-Custom"] = "1" // a header list of its own, not the shared one
            let withBody = HTTPRequest(method: .post, url: server.url("/echo"), body: .data(Data("{}".utf8)))
            // Twice each: the second finds a reused handle that keeps its options.
            for request in [HTTPRequest(url: server.url("/echo")), withHeaders, withBody, HTTPRequest(url: server.url("/echo")), withHeaders] {
                let echo = try Echo(try await service.send(request))
                #expect(Self.offers(echo) == [ContentDecoder.offer], "\(request.method) \(request.headers)")
            }
        }
    }

    @Test func aCompressedBodyArrivesDecoded() async throws {
        try await withServerAndService { server, service in
            var withHeaders = HTTPRequest(url: server.url("/gzip"))
            withHeaders.headers["X-Custom"] = "1"
            for request in [HTTPRequest(url: server.url("/gzip")), withHeaders] {
                let response = try await service.send(request)
                #expect(response.status == 200)
                #expect(response.headers["Content-Encoding"] == "gzip")
                #expect(String(decoding: response.body, as: UTF8.self) == TestServer.gzipText)
            }
        }
    }

    /// A download moves the stored bytes (it asks curl to decode nothing) and is a plain GET, as
    /// a decoded `send` is: one handle serving both in turn (libcurl 8.1.0 and later reuse
    /// handles, keeping a plain GET's options) must decode for the one and not for the other.
    @Test func decodingFollowsTheRequestOnAReusedHandle() async throws {
        try await withServerAndService { server, service in
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-decoding-\(UUID())")
            defer {
                try? FileManager.default.removeItem(at: target)
                PartialDownload.remove(for: target)
            }
            let stored = DownloadOptions(resume: false, verifyIntegrity: false, slicing: nil, contentDecoding: .stored)
            // Each after the other, both ways round.
            for downloads in [true, false, true, false] {
                if downloads {
                    _ = try await service.downloadFile(HTTPRequest(url: server.url("/gzip")), to: target, options: stored)
                    #expect(try Data(contentsOf: target) == TestServer.gzipBody)
                } else {
                    let decoded = try await service.send(HTTPRequest(url: server.url("/gzip")))
                    #expect(String(decoding: decoded.body, as: UTF8.self) == TestServer.gzipText)
                }
            }
        }
    }

    /// A request's own offer may name codings Courier does not decode (br, zstd); a gzip answer
    /// to it is decoded by Courier as one to its own offer is, on a handle shared in turn
    /// (ContentDecodingTests has the codings it does not decode).
    @Test func aRequestWithItsOwnOfferIsDecodedByCourier() async throws {
        try await withServerAndService { server, service in
            for own in [true, false, true] {
                var request = HTTPRequest(url: server.url("/gzip"))
                if own { request.headers["Accept-Encoding"] = "br, gzip" }
                let response = try await service.send(request)
                #expect(String(decoding: response.body, as: UTF8.self) == TestServer.gzipText, "own offer: \(own)")
            }
        }
    }

    /// A part of a coded body cannot decode whole: a request with a `Range` offers nothing (as
    /// Go's transport does), and a server that codes it anyway is not decoded.
    @Test func aRangedRequestOffersNothingAndIsNotDecoded() async throws {
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.url("/echo"))
            request.headers["Range"] = "bytes=0-99"
            #expect(Self.offers(try Echo(try await service.send(request))).isEmpty)
            var coded = HTTPRequest(url: server.faultURL("/gzip-cut"))
            coded.headers["Range"] = "bytes=0-"
            let response = try await service.send(coded)
            #expect(response.headers["Content-Encoding"] == "gzip" && response.body.prefix(2) == Data([0x1F, 0x8B]))
        }
    }

    @Test func aRequestsOwnOfferWinsAndIsTheOnlyOne() async throws {
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.url("/echo"))
            request.headers["accept-encoding"] = "identity"
            let echo = try Echo(try await service.send(request))
            #expect(Self.offers(echo) == ["identity"])
        }
    }

    @Test func turnedOffNothingIsOfferedOrDecoded() async throws {
        try await withServerAndService(configure: { $0.transport.automaticDecompression = false }) { server, service in
            let echo = try Echo(try await service.send(HTTPRequest(url: server.url("/echo"))))
            #expect(Self.offers(echo).isEmpty)
            let response = try await service.send(HTTPRequest(url: server.url("/gzip")))
            #expect(response.body == TestServer.gzipBody)
        }
    }

    /// A body written straight to a file (`send(_:writingBodyTo:)`) keeps the bytes as the
    /// server sent them, so it offers no encoding, and a compressed answer stays compressed.
    @Test func aBodyWrittenToAFileOffersNothingAndStaysAsSent() async throws {
        try await withServerAndService { server, service in
            let target = FileManager.default.temporaryDirectory.appendingPathComponent("courier-decoding-\(UUID())")
            defer { try? FileManager.default.removeItem(at: target) }
            _ = try await service.send(HTTPRequest(url: server.url("/echo")), writingBodyTo: target)
            let echo = try JSONDecoder().decode(Echo.self, from: Data(contentsOf: target))
            #expect(Self.offers(echo).isEmpty)
            _ = try await service.send(HTTPRequest(url: server.url("/gzip")), writingBodyTo: target)
            #expect(try Data(contentsOf: target) == TestServer.gzipBody)
        }
    }
}
