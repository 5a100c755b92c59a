@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import MetricsTestKit
import CourierTestSupport
import Testing

/// Circuit breakers: the pure state machine, then a host that fails and recovers.
@Suite struct CircuitBreakerTests {
    static let policy = CircuitBreakerPolicy(failureThreshold: 3, openDuration: .seconds(10), maximumOpenDuration: .seconds(30))

    @Test func opensAfterTheThresholdThenProbesAndCloses() {
        var circuit = CircuitStateMachine(policy: Self.policy)
        for _ in 0..<2 {
            #expect(circuit.admit(now: .zero).0 == .allowed)
            #expect(circuit.record(.failure, probe: false, now: .zero) == nil)
        }
        #expect(circuit.record(.failure, probe: false, now: .seconds(1)) == .open)
        #expect(circuit.admit(now: .seconds(5)).0 == .rejected(retryAfter: .seconds(6)))
        // A late answer to a request let through before the circuit opened changes nothing.
        #expect(circuit.record(.success, probe: false, now: .seconds(5)) == nil)
        #expect(circuit.current == .open)
        let (probe, transition) = circuit.admit(now: .seconds(11))
        #expect(probe == .probe && transition == .halfOpen)
        #expect(circuit.admit(now: .seconds(11)).0 == .rejected(retryAfter: nil)) // one probe at a time
        #expect(circuit.record(.failure, probe: true, now: .seconds(12)) == .open)
        #expect(circuit.admit(now: .seconds(12 + 19)).0 == .rejected(retryAfter: .seconds(1))) // twice as long
        #expect(circuit.admit(now: .seconds(32)).0 == .probe)
        #expect(circuit.record(.success, probe: true, now: .seconds(32)) == .closed)
        #expect(circuit.admit(now: .seconds(32)).0 == .allowed)
    }

    @Test func anAbandonedProbeFreesItsPlace() {
        var circuit = CircuitStateMachine(policy: CircuitBreakerPolicy(failureThreshold: 1, openDuration: .seconds(1)))
        _ = circuit.record(.failure, probe: false, now: .zero)
        #expect(circuit.admit(now: .seconds(2)).0 == .probe)
        _ = circuit.record(.abandoned, probe: true, now: .seconds(2))
        #expect(circuit.admit(now: .seconds(2)).0 == .probe)
    }

    @Test func successesResetTheRun() {
        var circuit = CircuitStateMachine(policy: Self.policy)
        for _ in 0..<10 {
            _ = circuit.record(.failure, probe: false, now: .zero)
            _ = circuit.record(.failure, probe: false, now: .zero)
            _ = circuit.record(.success, probe: false, now: .zero)
        }
        #expect(circuit.current == .closed)
    }

    /// A host answers 503 four times, then recovers. Three failures open the circuit; queries
    /// fail fast without reaching the server; the first probe meets the fourth 503 and reopens
    /// it for twice as long; the next probe succeeds and closes it.
    @Test func aFailingHostOpensTheCircuitAndARecoveredOneClosesIt() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let clock = VirtualClock()
            let metrics = TestMetrics()
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: clock)
            configuration.auth.authorizer = FaultInjector("503x4")
            configuration.retry = .disabled
            configuration.limits.circuitBreaker = CircuitBreakerPolicy(failureThreshold: 3, openDuration: .seconds(10))
            configuration.telemetry.metricsFactory = metrics
            try await withCheckedService(configuration: configuration) { service in
                let events = service.events
                let host = RequestPipeline.hostKey(server.baseURL)
                for _ in 0..<3 {
                    await #expect(throws: APIError.self) { try await service.execute(Notes.get("note-0001")) }
                }
                #expect(service.circuitState(of: host) == .open)
                let reached = server.counters.requests
                let error = await #expect(throws: CircuitOpenError.self) { try await service.execute(Notes.get("note-0001")) }
                #expect(error?.host == host && error?.retryAfter == .seconds(10))
                #expect(server.counters.requests == reached, "an open circuit let a request through")

                try await clock.sleep(for: .seconds(10))
                await #expect(throws: APIError.self) { try await service.execute(Notes.get("note-0001")) } // the 4th 503
                #expect(service.circuitState(of: host) == .open)
                let longer = await #expect(throws: CircuitOpenError.self) { try await service.execute(Notes.get("note-0001")) }
                #expect(longer?.retryAfter == .seconds(20))

                try await clock.sleep(for: .seconds(20))
                let note = try await service.execute(Notes.get("note-0001"))
                #expect(note.id == "note-0001")
                #expect(service.circuitState(of: host) == .closed)
                _ = try await service.execute(Notes.get("note-0001"))

                await service.shutdown()
                var states: [CircuitState] = []
                for await event in events { if case .circuitChanged(_, let state) = event { states.append(state) } }
                #expect(states == [.open, .halfOpen, .open, .halfOpen, .closed])
                #expect(metrics.counterTotal(label: "courier_circuit_rejected_total", dimensions: [("host", host)]) == 2)
                #expect(try metrics.expectGauge("courier_circuit_state", [("host", host)]).lastValue == 0)
            }
        }
    }

    /// Raw requests are not guarded unless the policy says so; refused connections count.
    @Test func rawRequestsAreGuardedOnlyWhenAsked() async throws {
        let closed = URL(string: "http://127.0.0.1:9/")! // the discard port: nothing listens
        for guards in [false, true] {
            var configuration = ServiceActor.Configuration()
            configuration.limits.circuitBreaker = CircuitBreakerPolicy(failureThreshold: 2, guardsRawRequests: guards)
            try await withCheckedService(configuration: configuration) { service in
                for _ in 0..<2 {
                    await #expect(throws: TransportError.self) { try await service.send(HTTPRequest(url: closed)) }
                }
                if guards {
                    await #expect(throws: CircuitOpenError.self) { try await service.send(HTTPRequest(url: closed)) }
                } else {
                    await #expect(throws: TransportError.self) { try await service.send(HTTPRequest(url: closed)) }
                }
            }
        }
    }
}
