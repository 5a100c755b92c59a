@testable import CourierLoad
import Testing

@Suite struct LoadScheduleTests {
    /// The slowest rate's second request is ten years out: past a duration's end, or past the
    /// clock itself for a request count, it ends the schedule instead of trapping.
    @Test func aScheduleWhoseNextRequestIsPastTheClockEnds() {
        let far = LoadSchedule(start: UInt64.max - 10, limit: .requests(5), rate: StageProfile(constant: LoadOptions.slowestRate))
        #expect(far.next()?.number == 0)
        #expect(far.next() == nil)
        let slow = LoadSchedule(start: 1_000, limit: .duration(nanoseconds: 2_000_000_000), rate: StageProfile(constant: 1e-300))
        #expect(slow.next()?.intendedStart == 1_000)
        #expect(slow.next() == nil)
    }

    /// A count within a time: whichever ends first, in both models; what was not sent is counted
    /// only up to the count.
    @Test func aCountWithinATimeEndsAtWhicheverComesFirst() {
        let now = monotonicNanoseconds()
        let counted = LoadSchedule(start: now, limit: .requests(3, within: 3_600_000_000_000), rate: nil)
        #expect([counted.next(), counted.next(), counted.next()].allSatisfy { $0 != nil } && counted.next() == nil)
        let timed = LoadSchedule(start: now - 2_000_000_000, limit: .requests(1_000_000, within: 1_000_000_000), rate: nil)
        #expect(timed.next() == nil)
        // Open model: 1,000 a second for 1 s would be 1,000 requests; the count of 10 ends it first.
        let open = LoadSchedule(start: now, limit: .requests(10, within: 1_000_000_000), rate: StageProfile(constant: 1000))
        var sent = 0
        while open.next() != nil { sent += 1 }
        #expect(sent == 10)
        // Fallen behind by more than its lateness: the count bounds what is called not sent.
        let late = LoadSchedule(start: now - 2_000_000_000, limit: .requests(10, within: 1_000_000_000), rate: StageProfile(constant: 1000),
                                lateness: 500_000_000)
        #expect(late.next() == nil && late.dropped == 10)
    }

    /// A run past its duration by more than its lateness (the request timeout) starts nothing
    /// more, and counts what was due within the duration and not sent: exactly, for a shard too.
    @Test func aRunTooFarBehindStopsAndCountsWhatItDidNotSend() throws {
        let twoSecondsAgo = monotonicNanoseconds() - 2_000_000_000
        for (shard, share) in [(nil, 1000), (try LoadShard(index: 1, count: 3), 333)] as [(LoadShard?, Int)] {
            let late = LoadSchedule(start: twoSecondsAgo, limit: .duration(nanoseconds: 1_000_000_000), rate: StageProfile(constant: 1000),
                                    shard: shard, lateness: 500_000_000)
            #expect(late.next() == nil)
            #expect(late.next() == nil)
            #expect(late.dropped == share)
            // Without a lateness (the default) the same schedule sends every request, however late.
            let patient = LoadSchedule(start: twoSecondsAgo, limit: .duration(nanoseconds: 1_000_000_000), rate: StageProfile(constant: 1000),
                                       shard: shard)
            var sent = 0
            while patient.next() != nil { sent += 1 }
            #expect(sent == share && patient.dropped == 0)
        }
        // A ramp's due count is the integral of its rate: 0 → 100/s over 2 s is 100 requests.
        #expect(StageProfile(initial: 0, stages: [try LoadStage(duration: .seconds(2), target: 100)]).dueCount(before: 2) == 100)
        #expect(StageProfile(constant: 1e300).dueCount(before: 1) == .max)
    }
}
