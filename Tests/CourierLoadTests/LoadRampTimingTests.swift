import Courier
@testable import CourierLoad
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Ramps against the test server, judged per second of real time: in the timed set (Makefile
/// `TIMED_TESTS`), alone after the parallel suite, so a starved pool does not move requests
/// from one second to the next.
@Suite struct LoadRampTimingTests {
    /// The open model against the test server: once past the first second of each stage, the
    /// measured rate per second is within 5% of the ramp's.
    @Test func anOpenRampFollowsItsStagesOnTheWire() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/json/64")
            options.concurrency = 32
            // 100/s for 2 s, up to 400/s over 2 s, 400/s for 2 s.
            options.rate = 100
            options.ramp = LoadRamp(.rate, stages: try LoadStageTests.stages([(2, 100), (2, 400), (2, 400)]))
            let result = try await LoadRunner(options: options).run()
            #expect(result.model == .open)
            #expect(result.ramp == options.ramp)
            #expect(result.settings["stages"] == "2s:100/s 2s:400/s 2s:400/s")
            #expect(result.errors == 0)
            // Every slot is sent: 200 + 500 + 800, each counted once it ends.
            #expect(result.requests == 1_500)
            // Started on schedule: the recorder's per-second counts are by completion, so a
            // request sent late by a busy machine would move to the next second; latency counts
            // from the due time, so the p50 says whether starts were on time.
            let timeline = try #require(result.timeline)
            let perSecond = timeline.requestsPerSecond
            for (second, expected) in [(1, 100.0), (3, 325.0), (5, 400.0)] {
                #expect(abs(perSecond[second] - expected) <= expected * 0.05, "second \(second): \(perSecond[second])/s, the ramp says \(expected)/s")
            }
        }
    }

    /// The closed model: in flight follows the ramp up and back down. In flight is measured by
    /// Little's law (throughput × mean latency, per second of the timeline), so a slow machine
    /// changes the throughput but not the figure.
    @Test func aClosedRampChangesTheRequestsInFlight() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.url = server.url("/delay/100")
            // Up to 4 in flight over 1 s (workers join at 0, 0.25, 0.5 and 0.75 s), 4 for 2 s, down to 0 over 1 s.
            options.ramp = LoadRamp(.concurrency, stages: try LoadStageTests.stages([(1, 4), (2, 4), (1, 0)]))
            let result = try await LoadRunner(options: options).run()
            #expect(result.model == .closed)
            #expect(result.concurrency == 4)
            #expect(result.settings["concurrency"] == "4")
            let timeline = try #require(result.timeline)
            // Requests count in the second they ended, whole: a second's figure can be off by a
            // request's share either way (5 workers would show ≥ 4.8).
            let inFlight = timeline.intervals.map { Double($0.requests) * $0.latency.mean / 1e6 }
            #expect((1.5...3.2).contains(inFlight[0]), "second 0: \(inFlight[0]) in flight, the ramp averages 2.5")
            for second in [1, 2] {
                #expect((3.4...4.6).contains(inFlight[second]), "second \(second): \(inFlight[second]) in flight, the ramp says 4")
            }
            // The ramp ends the run at 4 s, each worker after the request it had in flight.
            #expect(result.durationSeconds >= 3.9 && result.durationSeconds < 5, "\(result.durationSeconds) s")
        }
    }
}
