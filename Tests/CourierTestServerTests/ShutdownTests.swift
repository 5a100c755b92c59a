import CourierSync
import CourierTestServer
import CourierTestSupport
import Foundation
import Glibc
import Testing

/// The test server stops in bounded time whatever its clients left behind. Found across the
/// Netem link: a middlebox reset (nftables answering for the server) leaves the server's side of
/// an upload ESTABLISHED with no more bytes ever coming, and the graceful shutdown waited on
/// that handler forever.
@Suite struct TestServerShutdownTests {
    @Test func stopEndsEvenWithARequestBodyThatNeverArrives() async throws {
        let server = try await TestServer.start()
        let port = server.baseURL.port!
        // A request that promises 1,000,000 bytes, sends 10, and then neither sends nor closes.
        let descriptor = try #require(connectedLoopbackSocket(port: port))
        defer { close(descriptor) }
        let head = "PUT /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n0123456789"
        #expect(head.utf8.count == send(descriptor, head, head.utf8.count, 0))
        #expect(await eventually(within: 30) { server.counters.inFlight == 1 }, "the upload's handler is waiting for its body")

        let started = ContinuousClock.now
        // Unstructured, so a stop() that never returns fails this test instead of hanging it.
        let done = LockedValue(false)
        Task {
            await server.stop()
            done.withLock { $0 = true }
        }
        // stop() cancels what is left after 2 s; the bound is wide because the suite runs ~500
        // tests on two cores, and a loaded pool has delayed that 2 s sleep's wake-up by 11 s.
        let stopped = await eventually(within: 40) { done.withLock { $0 } }
        #expect(stopped, "stop() still waiting after \(ContinuousClock.now - started)")
    }
}
