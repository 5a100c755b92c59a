@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// Timeouts, resets, closed connections, bad hosts and oversized bodies: each a typed error, none a hang or a leak.
@Suite struct FailureTests {
    @Test func totalTimeout() async throws {
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.url("/delay/30000"))
            request.timeouts.total = .milliseconds(200)
            let started = ContinuousClock.now
            await #expect(throws: TransportError.timedOut) { try await service.send(request) }
            #expect(ContinuousClock.now - started < .seconds(10)) // the deadline, not the server's 30 s
            await expectNoLeaks(service)
        }
    }

    @Test func connectTimeout() async throws {
        let blackhole = BlackholeListener()
        try await withCheckedService(configuration: .suite()) { service in
            var request = HTTPRequest(url: blackhole.url)
            request.timeouts.connect = .milliseconds(200)
            await #expect(throws: TransportError.timedOut) { try await service.send(request) }
            await expectNoLeaks(service)
        }
    }

    @Test func idleTimeoutWhenTheBodyStalls() async throws {
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.url("/stall?bytes=100&seconds=30"))
            request.timeouts.idle = .seconds(1)
            let started = ContinuousClock.now
            await #expect(throws: TransportError.timedOut) { try await service.send(request) }
            #expect(ContinuousClock.now - started < .seconds(15)) // the idle timeout, not the server's 30 s
        }
    }

    @Test func resetMidBodyIsConnectionLost() async throws {
        try await withServerAndService { server, service in
            let error = await #expect(throws: TransportError.self) {
                try await service.send(HTTPRequest(url: server.faultURL("/reset-mid-body")))
            }
            #expect(error == .connectionLost)
            #expect(error?.curlCode != nil)
            #expect(error?.isTransient == true)
            await expectNoLeaks(service)
        }
    }

    @Test func resetBeforeHeadersIsConnectionLost() async throws {
        try await withServerAndService { server, service in
            await #expect(throws: TransportError.connectionLost) {
                try await service.send(HTTPRequest(url: server.faultURL("/reset-before-headers")))
            }
        }
    }

    @Test func truncatedBodyIsConnectionLost() async throws {
        try await withServerAndService { server, service in
            await #expect(throws: TransportError.connectionLost) {
                try await service.send(HTTPRequest(url: server.faultURL("/truncated")))
            }
        }
    }

    @Test func serverClosingKeptAliveConnectionsIsSurvived() async throws {
        try await withServerAndService { server, service in
            for _ in 0..<10 {
                let response = try await service.send(HTTPRequest(url: server.faultURL("/close-after-response")))
                #expect(response.status == 200)
                #expect(String(decoding: response.body, as: UTF8.self) == "ok")
            }
            // One connection per request; a request that raced the server's close went out again
            // on a fresh one (curl's own re-send), so a slow machine may see more.
            #expect(server.counters.connectionsOpened >= 10)
            await expectNoLeaks(service)
        }
    }

    @Test func unknownHost() async throws {
        try await withCheckedService(configuration: .suite()) { service in
            await #expect(throws: TransportError.hostNotFound) {
                try await service.send(HTTPRequest(url: URL(string: "http://does-not-exist.invalid/")!))
            }
        }
    }

    @Test func refusedPort() async throws {
        try await withCheckedService(configuration: .suite()) { service in
            let port = unusedPort()
            let error = await #expect(throws: TransportError.self) {
                try await service.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(port)/?key=s3kr1t")!))
            }
            #expect(error == .connectionFailed)
            #expect(error?.url?.contains("s3kr1t") == false)
            #expect(error?.url?.contains("key=_snip_") == true)
            await expectNoLeaks(service)
        }
    }

    @Test func bodyOverTheMaximumIsATypedErrorWithBoundedMemory() async throws {
        try await withServerAndService(configure: { $0.transport.maxResponseBodySize = 1_000_000 }) { server, service in
            let atTheLimit = try await service.send(HTTPRequest(url: server.url("/bytes/1000000")))
            #expect(atTheLimit.body.count == 1_000_000)
            await #expect(throws: TransportError.bodyTooLarge) {
                try await service.send(HTTPRequest(url: server.url("/bytes/1000001")))
            }
            await #expect(throws: TransportError.bodyTooLarge) {
                try await service.send(HTTPRequest(url: server.url("/chunked/5000000")))
            }
            await expectNoLeaks(service)
        }
    }

    @Test func garbageInsteadOfHTTPIsAProtocolError() async throws {
        try await withServerAndService { server, service in
            let error = await #expect(throws: TransportError.self) {
                try await service.send(HTTPRequest(url: server.faultURL("/not-http")))
            }
            #expect(error == .protocolError || error == .connectionLost)
        }
    }

    /// A header line that continues nothing (the first after the status line, folded) on a
    /// handle that served a response before. libcurl before 8.1.0 kept a pointer to that earlier
    /// response's last header, freed since, and unfolded into it: a use-after-free that glibc may
    /// end with "double free detected" (curl/curl#11101). Found by FuzzWire. A handle now serves
    /// one transfer on those versions. RFC 9112 §2.2 lets a recipient reject such a message or
    /// ignore the line: libcurl 7.88.1 rejects it (a typed error here), 8.14.1 ignores it.
    @Test func aFoldedFirstHeaderAfterAnotherResponseIsRejectedOrIgnored() async throws {
        try await withServerAndService { server, service in
            for _ in 0..<3 {
                let echoed = try await service.send(HTTPRequest(url: server.url("/echo")))
                #expect(echoed.status == 200)
                do {
                    let response = try await service.send(HTTPRequest(url: server.faultURL("/folded-first-header")))
                    // Ignored: the line is gone, not joined to a header or to the status line.
                    #expect(response.status == 200 && response.body == Data("ok".utf8))
                    #expect(Array(response.headers).map { "\($0.name): \($0.value)" } == ["Content-Length: 2"])
                } catch {
                    #expect(error as? TransportError == .protocolError, "\(error)")
                }
            }
            await expectNoLeaks(service)
        }
    }

    @Test func invalidChunkedEncodingIsATypedError() async throws {
        try await withServerAndService { server, service in
            await #expect(throws: TransportError.self) {
                try await service.send(HTTPRequest(url: server.faultURL("/bad-chunked")))
            }
            await expectNoLeaks(service)
        }
    }

    @Test func fileBodyThatDoesNotExistIsAFileError() async throws {
        try await withServerAndService { server, service in
            let missing = URL(fileURLWithPath: "/nonexistent/\(UUID())")
            await #expect(throws: TransportError.fileError) {
                try await service.send(HTTPRequest(method: .put, url: server.url("/upload"), body: .file(missing)))
            }
            await expectNoLeaks(service)
        }
    }
}
