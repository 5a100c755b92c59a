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

    @Test func aCallerThatComputedForLongPausesRunningInPlaceInProportion() {
        var policy = CallerResumption(enabled: true)
        policy.ran(from: 1_000, to: 1_000 + CallerResumption.longRun) // exactly the bound: no pause
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: 2_000_000) == .runInPlace)
        let end: UInt64 = 5_000_000_000
        let ran: UInt64 = 3_000_000
        policy.ran(from: end - ran, to: end)
        let pause = ran * CallerResumption.pauseFactor // 300 ms for 3 ms
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: end + 1) == .handToPool)
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: end + pause - 1) == .handToPool)
        #expect(policy.decide(resumed: 1, othersInFlight: 0, workQueued: false, now: end + pause) == .runInPlace)
    }
}
