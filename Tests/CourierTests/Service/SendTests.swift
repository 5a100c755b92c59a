@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

@Suite struct SendTests {
    @Test(arguments: [HTTPMethod.get, .post, .put, .patch, .delete, .options])
    func methodsReachTheServer(method: HTTPMethod) async throws {
        try await withServerAndService { server, service in
            let response = try await service.send(HTTPRequest(method: method, url: server.url("/echo?x=1")))
            #expect(response.status == 200)
            let echo = try Echo(response)
            #expect(echo.method == method.rawValue)
            #expect(echo.query == "x=1")
            #expect(echo.bodyLength == 0)
        }
    }

    @Test func headHasStatusAndHeadersButNoBody() async throws {
        try await withServerAndService { server, service in
            let response = try await service.send(HTTPRequest(method: .head, url: server.url("/bytes/1000")))
            #expect(response.status == 200)
            #expect(response.headers["Content-Length"] == "1000")
            #expect(response.body.isEmpty)
        }
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func dataBodiesArriveIntact(method: HTTPMethod) async throws {
        try await withServerAndService { server, service in
            let payload = Data(#"{"hello":"wörld"}"#.utf8)
            var request = HTTPRequest(method: method, url: server.url("/echo"), body: .data(payload))
            request.headers["Content-Type"] = "application/json"
            let echo = try Echo(try await service.send(request))
            #expect(echo.body == #"{"hello":"wörld"}"#)
            #expect(echo.header("content-type") == "application/json")
            #expect(echo.header("content-length") == "\(payload.count)")
            #expect(echo.header("expect") == nil)
        }
    }

    @Test func fileBodiesStreamFromDisk() async throws {
        try await withServerAndService { server, service in
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID()).bin")
            let bytes = Data(TestPattern.bytes(count: 3 << 20))
            try bytes.write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }
            let response = try await service.send(HTTPRequest(method: .put, url: server.url("/upload"), body: .file(url)))
            let result = try JSONDecoder().decode([String: JSONScalar].self, from: response.body)
            #expect(result["bytes"] == .int(bytes.count))
            #expect(result["hash"] == .string(TestPattern.Hasher.of(bytes).hex))
        }
    }

    @Test func streamBodiesWithUnknownLengthAreSentChunked() async throws {
        try await withServerAndService { server, service in
            let chunks = AsyncStream<Data> { continuation in
                for index in 0..<20 { continuation.yield(Data(TestPattern.bytes(count: 1000, offset: index * 1000))) }
                continuation.finish()
            }
            let response = try await service.send(HTTPRequest(method: .post, url: server.url("/echo"), body: .stream(chunks)))
            let echo = try Echo(response)
            #expect(echo.bodyLength == 20_000)
            #expect(echo.bodyHash == TestPattern.Hasher.of(Data(TestPattern.bytes(count: 20_000))).hex)
            #expect(echo.header("transfer-encoding") == "chunked")
        }
    }

    @Test func streamBodyFailureFailsTheRequest() async throws {
        struct ProducerFailed: Error {}
        try await withServerAndService { server, service in
            let chunks = AsyncThrowingStream<Data, any Error> { continuation in
                continuation.yield(Data(count: 100))
                continuation.finish(throwing: ProducerFailed())
            }
            // The sequence's own error, not a transport error that describes it in words.
            await #expect(throws: ProducerFailed.self) {
                try await service.send(HTTPRequest(method: .post, url: server.url("/upload"), body: .stream(chunks)))
            }
            await expectNoLeaks(service)
        }
    }

    @Test func chunkedResponsesAreReassembled() async throws {
        try await withServerAndService { server, service in
            let response = try await service.send(HTTPRequest(url: server.url("/chunked/300000")))
            #expect(response.headers["Transfer-Encoding"] == "chunked")
            #expect(response.body == Data(TestPattern.bytes(count: 300_000)))
        }
    }

    @Test func statusCodesAreResponsesNotErrors() async throws {
        try await withServerAndService { server, service in
            for code in [201, 204, 304, 400, 404, 412, 500, 503] {
                let response = try await service.send(HTTPRequest(url: server.url("/status/\(code)")))
                #expect(response.status == code)
            }
        }
    }

    @Test func redirectsAreFollowedAndReportTheFinalURL() async throws {
        try await withServerAndService { server, service in
            let response = try await service.send(HTTPRequest(url: server.url("/redirect/3")))
            #expect(response.status == 200)
            #expect(response.url.path == "/redirect/0")
            #expect(try Echo(response).path == "/redirect/0")
        }
    }

    /// A handle keeps the URL it was given (`EasyHandle.setURL`), so sending the same URL again
    /// does not set it again: each send must still start there, not where the last one was
    /// redirected to, and a different URL must replace it.
    @Test func aURLSentAgainStartsFromItselfAfterARedirect() async throws {
        try await withServerAndService { server, service in
            let redirecting = HTTPRequest(url: server.url("/redirect/3"))
            for _ in 0..<3 {
                let before = server.counters.requests
                let response = try await service.send(redirecting)
                #expect(response.url.path == "/redirect/0")
                #expect(server.counters.requests - before == 4, "three redirects and the last answer each time")
            }
            let other = try await service.send(HTTPRequest(url: server.url("/echo?second=1")))
            #expect(try Echo(other).query == "second=1")
            let again = try await service.send(redirecting)
            #expect(again.url.path == "/redirect/0")
        }
    }

    @Test func tooManyRedirectsIsATypedError() async throws {
        try await withServerAndService(configure: { $0.transport.maxRedirects = 2 }) { server, service in
            await #expect(throws: TransportError.tooManyRedirects) {
                try await service.send(HTTPRequest(url: server.url("/redirect/5")))
            }
        }
    }

    /// Only http and https are followed: a redirect to a file on this machine or to another
    /// protocol fails the request as the server's protocol error. Every scheme here is one
    /// Debian's libcurl is built with. libcurl's own redirect default already refuses all but
    /// `ftp://`, so that case is the one that fails if the handle's protocol set is left unset;
    /// the others guard the default (port 9 is discard: nothing answers there).
    @Test(arguments: ["file:///etc/passwd", "ftp://127.0.0.1:9/x", "dict://127.0.0.1:9/stat",
                      "gopher://127.0.0.1:9/x", "telnet://127.0.0.1:9", "tftp://127.0.0.1:9/x"])
    func aRedirectToAnotherProtocolIsNotFollowed(_ target: String) async throws {
        try await withServerAndService { server, service in
            let query = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let before = server.counters.requests
            let error = await #expect(throws: TransportError.self) {
                try await service.send(HTTPRequest(url: server.url("/redirect-to?url=\(query)")))
            }
            #expect(error?.code == .protocolError, "\(String(describing: error))")
            #expect(server.counters.requests - before == 1, "the redirect alone")
        }
    }

    @Test func credentialsAreNotForwardedToAnotherHost() async throws {
        try await withServerAndService { server, service in
            // 127.0.0.1 and localhost are different hosts to libcurl.
            let otherHost = "http://localhost:\(server.baseURL.port!)/echo"
            var request = HTTPRequest(url: server.url("/redirect-to?url=\(otherHost)"))
            request.headers["Authorization"] = "Bearer s3kr1t-token"
            request.headers["Cookie"] = "session=secret"
            let echo = try Echo(try await service.send(request))
            #expect(echo.path == "/echo")
            #expect(echo.header("authorization") == nil)
            #expect(echo.header("cookie") == nil)

            // The same host keeps them.
            var sameHost = HTTPRequest(url: server.url("/redirect/1"))
            sameHost.headers["Authorization"] = "Bearer s3kr1t-token"
            #expect(try Echo(try await service.send(sameHost)).header("authorization") == "Bearer s3kr1t-token")
        }
    }

    @Test func userAgentDefaultsToCourierAndCanBeOverridden() async throws {
        try await withServerAndService { server, service in
            let plain = try Echo(try await service.send(HTTPRequest(url: server.url("/echo"))))
            #expect(plain.header("user-agent")?.hasPrefix("Courier/") == true)
            #expect(plain.header("user-agent")?.contains("Linux; Swift") == true)
            var request = HTTPRequest(url: server.url("/echo"))
            request.headers["User-Agent"] = "MyApp/2"
            #expect(try Echo(try await service.send(request)).header("user-agent") == "MyApp/2")
        }
    }

    @Test func connectionsAreKeptAliveAndReused() async throws {
        try await withServerAndService { server, service in
            for _ in 0..<20 { _ = try await service.send(HTTPRequest(url: server.url("/echo"))) }
            #expect(server.counters.connectionsOpened == 1)
            #expect(await service.stats.openConnections == 1)
        }
    }
}

/// A JSON number or string, for decoding small server answers.
enum JSONScalar: Decodable, Equatable {
    case int(Int), string(String)
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int.self) { self = .int(value) } else { self = .string(try container.decode(String.self)) }
    }
}
