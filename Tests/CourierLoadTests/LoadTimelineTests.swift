@testable import CourierLoad
import Foundation
import CourierTestSupport
import Testing

@Suite struct LoadTimelineTests {
    @Test func requestsLandInTheirSecond() {
        var timeline = LoadTimeline(startedAt: 1000)
        timeline.record(atSecond: 0.2, failed: false, microseconds: 1000)
        timeline.record(atSecond: 0.9, failed: true, microseconds: 3000)
        timeline.record(atSecond: 2.5, failed: false, microseconds: 2000)
        #expect(timeline.intervalSeconds == 1)
        #expect(timeline.intervals.map(\.requests) == [2, 0, 1])
        #expect(timeline.intervals.map(\.errors) == [1, 0, 0])
        #expect(timeline.intervals[0].latency.max >= 2990)
        #expect(timeline.requestsPerSecond == [2, 0, 1])
    }

    /// A long run keeps at most 600 intervals by doubling them, and loses no request.
    @Test func aLongRunDoublesItsIntervalsAndKeepsEveryRequest() {
        var timeline = LoadTimeline(startedAt: 0)
        for second in stride(from: 0.0, to: 3000, by: 0.5) {
            timeline.record(atSecond: second, failed: second.truncatingRemainder(dividingBy: 10) == 0, microseconds: 500)
        }
        #expect(timeline.intervalSeconds == 8)
        #expect(timeline.intervals.count <= LoadTimeline.maximumIntervals)
        #expect(timeline.intervals.map(\.requests).reduce(0, +) == 6000)
        #expect(timeline.intervals.map(\.errors).reduce(0, +) == 300)
        #expect(timeline.intervals.map(\.latency.count).reduce(0, +) == 6000)
    }

    /// Timelines from machines that started 2 s apart line up by wall clock.
    @Test func mergedTimelinesLineUpByWallClock() throws {
        var early = LoadTimeline(startedAt: 100)
        var late = LoadTimeline(startedAt: 102.1)
        for second in 0..<5 { early.record(atSecond: Double(second) + 0.5, failed: false, microseconds: 100) }
        for second in 0..<5 { late.record(atSecond: Double(second) + 0.5, failed: true, microseconds: 200) }
        var merged = early
        merged.merge(late)
        #expect(merged.startedAt == 100)
        #expect(merged.intervals.map(\.requests) == [1, 1, 2, 2, 2, 1, 1])
        #expect(merged.intervals.map(\.errors) == [0, 0, 1, 1, 1, 1, 1])

        // Different widths: the finer one is coarsened first, exactly.
        var coarse = LoadTimeline(startedAt: 100)
        for second in stride(from: 0.0, to: 1300, by: 1) { coarse.record(atSecond: second, failed: false, microseconds: 10) }
        #expect(coarse.intervalSeconds == 4)
        var both = coarse
        both.merge(early)
        #expect(both.intervalSeconds == 4)
        #expect(both.intervals.map(\.requests).reduce(0, +) == 1305)
        #expect(both.intervals[0].requests == 4 + 4 && both.intervals[1].requests == 4 + 1)

        // Through JSON and back, as shards travel.
        let decoded = try JSONDecoder().decode(LoadTimeline.self, from: JSONEncoder().encode(both))
        #expect(decoded == both)
    }

    /// Seconds no run reaches, and starts a public initializer takes but no file may hold: the
    /// request is counted (at the timeline's far end), nothing traps.
    @Test func secondsPastAnyRunAreHeld() {
        var timeline = LoadTimeline(startedAt: 0)
        timeline.record(atSecond: .infinity, failed: false, microseconds: 10)
        timeline.record(atSecond: .nan, failed: false, microseconds: 10)
        timeline.record(atSecond: 1e300, failed: true, microseconds: 10)
        #expect(timeline.intervals.map(\.requests).reduce(0, +) == 3)
        #expect(timeline.intervals.count <= LoadTimeline.maximumIntervals)
        var far = LoadTimeline(startedAt: 1e300)
        far.record(atSecond: 1, failed: false, microseconds: 10)
        var merged = LoadTimeline(startedAt: -1e300)
        merged.record(atSecond: 1, failed: false, microseconds: 10)
        merged.merge(far)
        #expect(merged.intervals.map(\.requests).reduce(0, +) == 2)
    }
}
