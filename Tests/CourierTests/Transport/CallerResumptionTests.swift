@testable import Courier
import Testing

/// When the loop runs a resumed caller in place, and when it hands it to the pool: the decision
/// alone (CallerResumptionTimingTests watches it over loopback).
@Suite struct CallerResumptionTests {
    // MARK: The decision

    @Test func onlyALoneCallerWithNothingElseInFlightRunsInPlace() {
        let policy = CallerResumption(enabled: true)
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: 1) == .runInPlace)
        #expect(policy.decide(resumed: 2, othersInFlight: 0, workQueued: false, now: 1) == .handToPool)
        #expect(policy.decide(resumed: 1, othersInFlight: 1, workQueued: false, now: 1) == .handToPool)
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: true, now: 1) == .handToPool)
        #expect(CallerResumption(enabled: false).decide(resumed: 1, othersInFlight: 0, workQueued: false, now: 1) == .handToPool)
    }

    @Test func twoLongRunsInARowPauseRunningInPlaceInProportion() {
        var policy = CallerResumption(enabled: true)
        let ready: (CallerResumption, UInt64) -> Bool = { $0.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: $1) == .runInPlace }
        policy.ran(from: 1_000, to: 1_000 + CallerResumption.longRun) // exactly the bound: not long
        policy.ran(from: 2_000_000, to: 2_000_000 + CallerResumption.longRun)
        #expect(ready(policy, 3_000_000))
        let end: UInt64 = 5_000_000_000
        policy.ran(from: end - 4_000_000, to: end) // 4 ms, then 3 ms: paused for 100 × 3 ms
        #expect(ready(policy, end + 1), "one long run alone (a preempted loop thread looks the same) pauses nothing")
        let secondEnd = end + 10_000_000
        policy.ran(from: secondEnd - 3_000_000, to: secondEnd)
        let pause = 3_000_000 * CallerResumption.pauseFactor // 300 ms
        #expect(!ready(policy, secondEnd + 1))
        #expect(!ready(policy, secondEnd + pause - 1))
        #expect(ready(policy, secondEnd + pause))
    }

    @Test func aShortRunBetweenLongOnesStartsTheCountAgain() {
        var policy = CallerResumption(enabled: true)
        policy.ran(from: 0, to: 5_000_000)
        policy.ran(from: 6_000_000, to: 6_000_100)
        policy.ran(from: 7_000_000, to: 12_000_000)
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: 12_000_001) == .runInPlace)
        policy.ran(from: 13_000_000, to: 18_000_000) // the second long run in a row
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: 18_000_001) == .handToPool)
    }
}
