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
}
