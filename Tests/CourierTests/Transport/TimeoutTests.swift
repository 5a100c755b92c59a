@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The connect and total timeouts Courier keeps itself (``DeadlineSchedule``), over loopback:
/// each fires when it should and not before, names itself, and leaves nothing behind. What libcurl
/// did with its own timers, these keep: the connect timeout covers TLS and not the wait for a
/// connection another transfer holds; the total timeout covers redirects and a paused stream.
/// The bounds are wide on the late side only: a loaded machine under the sanitizers is slow, and
/// only a timeout that fires early or never is a defect. What the server delays is far longer than
/// any bound, so a late bound tells a timeout from an answer with room to spare; an order the test
/// needs (one request holding the connection before the next is sent) is waited for on the
/// server's counters, not by a sleep that a loaded machine can outlast.
@Suite struct TimeoutTests {
    /// With either loop driver: each bounds its wait by the earliest deadline.
    @Test(arguments: [LoopBackend.epoll, .multiPoll])
    func aTotalTimeoutFiresOnTimeAndNamesItself(backend: LoopBackend) async throws {
        try await withServerAndService(configure: { $0.transport.loopBackend = backend }) { server, service in
            var request = HTTPRequest(url: server.url("/stall?bytes=100&seconds=30"))
            request.timeouts.total = .milliseconds(400)
            let started = ContinuousClock.now
            let error = await #expect(throws: TransportError.self) { try await service.send(request) }
            let elapsed = ContinuousClock.now - started
            #expect(error == .timedOut)
            #expect(error?.message.contains("not complete within 0.4 seconds") == true, "\(String(describing: error))")
            #expect(elapsed >= .milliseconds(400) && elapsed < .seconds(5), "fired after \(elapsed)")
            await expectNoLeaks(service)
        }
    }

    @Test func aTotalTimeoutCountsEveryRedirect() async throws {
        try await withServerAndService { server, service in
            // Two hops, the last one slow: the deadline runs from the first.
            let target = "/delay/30000".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            var request = HTTPRequest(url: server.url("/redirect-to?url=\(target)"))
            request.timeouts.total = .milliseconds(500)
            let started = ContinuousClock.now
            await #expect(throws: TransportError.timedOut) { try await service.send(request) }
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(500) && elapsed < .seconds(15), "fired after \(elapsed)")
        }
    }

    @Test func aTotalTimeoutEndsAPausedStream() async throws {
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.url("/bytes/50000000"))
            request.timeouts.total = .milliseconds(600)
            let response = try await service.stream(request)
            var iterator = response.body.makeAsyncIterator()
            _ = try await iterator.next()
            // Not reading: curl pauses the transfer at the high-water mark, and the deadline still runs.
            try await Task.sleep(for: .milliseconds(1200))
            await #expect(throws: TransportError.timedOut) { while try await iterator.next() != nil {} }
            await expectNoLeaks(service)
        }
    }

    /// A request waiting inside libcurl for a connection slot (`maxConnectionsPerHost`) starts as
    /// soon as the transfer holding the slot times out or is cancelled. libcurl 8.10.0 to 8.18
    /// (Debian 13 ships 8.14.1) move the waiting transfer on in `curl_multi_remove_handle` but ask
    /// for a timer only when the removed transfer had one of its own, and Courier keeps its
    /// timeouts itself: with nothing else happening, the waiting request sat until its own timeout.
    @Test(arguments: [LoopBackend.epoll, .multiPoll], [false, true])
    func aRequestWaitingForTheConnectionStartsWhenItsHolderEnds(backend: LoopBackend, cancels: Bool) async throws {
        try await withServerAndService(configure: {
            $0.transport.loopBackend = backend
            $0.limits.connections.maxConnectionsPerHost = 1
        }) { server, service in
            var holder = HTTPRequest(url: server.url("/delay/30000"))
            if !cancels { holder.timeouts.total = .milliseconds(300) }
            let holding = Task { try await service.send(holder) }
            // Sent once the holder has the connection: curl keeps it waiting for a slot.
            try await Task.sleep(for: .milliseconds(100))
            var waiting = HTTPRequest(url: server.url("/delay/0"))
            waiting.timeouts.total = .seconds(20)
            let started = ContinuousClock.now
            async let answer = service.send(waiting)
            if cancels {
                try await Task.sleep(for: .milliseconds(300))
                holding.cancel()
            }
            _ = await holding.result
            #expect(try await answer.status == 200)
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(10), "the waiting request took \(elapsed)")
            await expectNoLeaks(service)
        }
    }

    /// More distinct timeouts than the schedule has keyed lists, at once: each request ends by
    /// its own, the short ones timed out, the long ones answered.
    @Test func manyDistinctTotalTimeoutsEachHoldTheirOwn() async throws {
        try await withServerAndService { server, service in
            let outcomes = try await withThrowingTaskGroup(of: (Int, Bool, Duration).self) { group in
                for index in 0..<24 {
                    group.addTask {
                        let short = index % 2 == 0
                        var request = HTTPRequest(url: server.url(short ? "/delay/30000" : "/delay/0"))
                        request.timeouts.total = short ? .milliseconds(200 + 37 * index) : .milliseconds(10_000 + index)
                        let started = ContinuousClock.now
                        do {
                            let response = try await service.send(request)
                            return (index, response.status == 200, ContinuousClock.now - started)
                        } catch let error as TransportError where error == .timedOut {
                            return (index, false, ContinuousClock.now - started)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.count == 24)
            for (index, answered, elapsed) in outcomes {
                if index % 2 == 0 {
                    #expect(!answered, "request \(index) outlived its timeout")
                    #expect(elapsed >= .milliseconds(200 + 37 * index) && elapsed < .seconds(15),
                            "request \(index) timed out after \(elapsed)")
                } else {
                    #expect(answered, "request \(index) timed out though its timeout was long")
                }
            }
            await expectNoLeaks(service)
        }
    }

    @Test(arguments: [LoopBackend.epoll, .multiPoll])
    func aConnectTimeoutCoversTheTLSHandshake(backend: LoopBackend) async throws {
        let silent = SilentListener()
        var configuration = ServiceActor.Configuration.suite()
        configuration.transport.loopBackend = backend
        try await withCheckedService(configuration: configuration) { service in
            // TCP connects (the kernel accepts into the backlog); the TLS handshake never answers.
            var request = HTTPRequest(method: .post, url: URL(string: "https://127.0.0.1:\(silent.port)/")!)
            request.body = .data(Data("x".utf8))
            request.timeouts.connect = .milliseconds(300)
            let started = ContinuousClock.now
            let error = await #expect(throws: TransportError.self) { try await service.send(request) }
            let elapsed = ContinuousClock.now - started
            #expect(error == .timedOut)
            #expect(error?.message.contains("no connection within 0.3 seconds") == true, "\(String(describing: error))")
            #expect(error?.requestMayHaveBeenSent == false, "the POST never went out, so it may be sent again")
            #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(5), "fired after \(elapsed)")
            await expectNoLeaks(service)
        }
    }

    @Test func aConnectTimeoutEndsWhenTheRequestGoesOut() async throws {
        try await withServerAndService { server, service in
            var request = HTTPRequest(url: server.url("/delay/1000"))
            request.timeouts.connect = .milliseconds(300)
            let response = try await service.send(request) // a new connection, then a slow answer
            #expect(response.status == 200)
        }
    }

    /// Waiting for the one connection another transfer holds is not connecting (libcurl's rule too).
    @Test func waitingForABusyConnectionIsNotConnecting() async throws {
        try await withServerAndService(configure: { $0.limits.connections.maxConnectionsPerHost = 1 }) { server, service in
            _ = try await service.send(HTTPRequest(url: server.url("/delay/0"))) // the connection
            let slow = Task { try await service.send(HTTPRequest(url: server.url("/delay/3000"))) }
            #expect(await eventually { server.counters.inFlight == 1 })
            var waiting = HTTPRequest(url: server.url("/delay/0"))
            waiting.timeouts.connect = .milliseconds(300)
            let started = ContinuousClock.now
            let response = try await service.send(waiting)
            #expect(response.status == 200)
            #expect(ContinuousClock.now - started >= .milliseconds(800), "it did wait for the busy connection")
            #expect(try await slow.value.status == 200)
        }
    }

    /// Nor is it idleness: the idle timeout starts when the transfer starts a connection or
    /// sends its request, not while it waits behind another on the only connection.
    ///
    /// The margins are wide because the drip shares two cores with the whole parallel suite: an
    /// 800 ms timeout against a byte every 200 ms once failed in CI when the server's own timer
    /// ran 600 ms late. Now the drip beats the timeout tenfold, and the wait still exceeds it.
    @Test func waitingForABusyConnectionIsNotIdle() async throws {
        try await withServerAndService(configure: {
            $0.limits.connections.maxConnectionsPerHost = 1
            $0.transport.timeouts.idle = .seconds(2)
        }) { server, service in
            _ = try await service.send(HTTPRequest(url: server.url("/delay/0"))) // the connection
            // Slow (6 s), but never silent for 2 s: a byte every 200 ms.
            let slow = Task { try await service.send(HTTPRequest(url: server.url("/drip?bytes=30&interval=200"))) }
            #expect(await eventually { server.counters.inFlight == 1 })
            let started = ContinuousClock.now
            let response = try await service.send(HTTPRequest(url: server.url("/delay/0")))
            #expect(response.status == 200)
            #expect(ContinuousClock.now - started >= .milliseconds(2500), "it waited longer than the idle timeout for the busy connection")
            #expect(try await slow.value.status == 200)
        }
    }

    /// HTTP/2: a stream past its total timeout is reset alone; the connection and its other streams go on.
    @Test func anHTTP2StreamTimesOutAlone() async throws {
        try await withTestServer { server in
            // nginx proxies `/gdch/N` to the test server's `/delay/N` (the path replaces the prefix).
            try await withNginxTLS(proxying: server.url("/delay//")) { peer in
                var configuration = ServiceActor.Configuration.suite()
                configuration.transport.tls = TLSConfiguration(caBundlePath: peer.caPath)
                configuration.transport.httpVersion = .http2
                configuration.limits.connections.maxConnectionsPerHost = 1
                try await withCheckedService(configuration: configuration) { service in
                    let ok = peer.url(host: "localhost", path: "/ok")
                    _ = try await service.send(HTTPRequest(url: ok))
                    var slow = HTTPRequest(url: peer.url(host: "localhost", path: "/gdch/30000"))
                    slow.timeouts.total = .milliseconds(500)
                    let started = ContinuousClock.now
                    let timedOut = Task { try await service.send(slow) }
                    for _ in 0..<20 { #expect(try await service.send(HTTPRequest(url: ok)).status == 200) }
                    await #expect(throws: TransportError.timedOut) { try await timedOut.value }
                    #expect(ContinuousClock.now - started < .seconds(20)) // not the 30 s answer
                    #expect(try await service.send(HTTPRequest(url: ok)).head.version == .http2)
                }
                let lines = try peer.accessLog()
                #expect(lines.filter { $0.hasSuffix("/ok") }.count == 22)
                let connections = Set(lines.map { $0.split(separator: " ")[0] })
                #expect(connections.count == 1, "the timed-out stream took its connection down: \(lines)")
            }
        }
    }
}
