@testable import Courier
import CourierSync
import CourierTestServer
import Foundation
import Logging
import Synchronization
import CourierTestSupport
import Testing

/// Collects log lines in memory.
final class CapturedLog: Sendable {
    let lines = LockedValue<[String]>([])

    var handler: @Sendable (String) -> any LogHandler {
        { label in LineLogHandler(label: label) { line in self.lines.withLock { $0.append(line) } } }
    }
}

@Suite struct LoggingTests {
    @Test func transfersAreTracedWithoutCredentials() async throws {
        let capture = CapturedLog()
        try await withServerAndService(configure: {
            $0.telemetry.logger = Logger(label: "test", factory: capture.handler)
        }) { server, service in
            var request = HTTPRequest(url: server.url("/echo?key=API-KEY-s3kr1t&alt=json"))
            request.headers["Authorization"] = "Bearer TOKEN-s3kr1t"
            _ = try await service.send(request)
            _ = try? await service.send(HTTPRequest(url: URL(string: "http://127.0.0.1:\(unusedPort())/?access_token=TOKEN-s3kr1t")!))
        }
        let lines = capture.lines.withLock { $0 }
        #expect(lines.contains { $0.contains("transfer started") })
        #expect(lines.contains { $0.contains("transfer finished") && $0.contains("200") })
        #expect(lines.contains { $0.contains("transfer failed") })
        for line in lines {
            #expect(!line.contains("s3kr1t"), "leaked: \(line)")
        }
    }

    /// The transport asks the logger's level once, at the start (`CurlMulti.tracesTransfers`).
    @Test func aLoggerAboveTraceGetsNoTransferLines() async throws {
        let capture = CapturedLog()
        try await withServerAndService(configure: {
            var logger = Logger(label: "test", factory: capture.handler)
            logger.logLevel = .debug
            $0.telemetry.logger = logger
        }) { server, service in
            #expect(await service.loop.multi.tracesTransfers == false)
            _ = try await service.send(HTTPRequest(url: server.url("/echo")))
        }
        #expect(!capture.lines.withLock { $0 }.contains { $0.contains("transfer ") })
    }
}
