@testable import CourierLoad
import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Stages (`--stage`): the load ramps in straight lines, as k6's ramping executors do, and the
/// schedule stays exact.
@Suite struct LoadStageTests {
    static func stages(_ pairs: [(seconds: Int64, target: Double)]) throws -> [LoadStage] {
        try pairs.map { try LoadStage(duration: .seconds($0.seconds), target: $0.target) }
    }

    /// Requests due in each second are the area under the rate in that second, to the request.
    @Test func dueTimesFollowTheAreaUnderTheRate() throws {
        // 0 → 100/s over 10 s, 100/s for 5 s, 100 → 0/s over 5 s.
        let profile = StageProfile(initial: 0, stages: try Self.stages([(10, 100), (5, 100), (5, 0)]))
        var perSecond = [Int](repeating: 0, count: 20)
        var number = 0
        while let due = profile.dueTime(ofRequest: number) {
            perSecond[Int(due)] += 1
            number += 1
        }
        #expect(number == 500 + 500 + 250)
        for second in 0..<20 {
            // ∫ rate over [s, s+1): 10·s + 5 on the way up, 100 flat, 100 − 20·(s−15) − 10 down.
            let area = second < 10 ? 10.0 * Double(second) + 5 : second < 15 ? 100 : 100 - 20 * Double(second - 15) - 10
            #expect(abs(Double(perSecond[second]) - area) <= 1, "second \(second): \(perSecond[second]) due, \(area) expected")
        }
        let due = (0..<number).map { profile.dueTime(ofRequest: $0)! }
        #expect(zip(due, due.dropFirst()).allSatisfy { $0 <= $1 }, "due times never go back")
    }

    @Test func aConstantProfileIsNOverTheRate() throws {
        let profile = StageProfile(constant: 250)
        for number in [0, 1, 249, 250, 1_000_003] {
            #expect(abs(profile.dueTime(ofRequest: number)! - Double(number) / 250) < 1e-9)
        }
        #expect(profile.value(at: 1e6) == 250)
    }

    /// Closed model: worker `i` runs while the ramp allows more than `i` in flight.
    @Test func workersStartAndStopWhereTheRampCrossesThem() throws {
        // 0 → 10 in flight over 10 s, then down to 4 over 2 s.
        let profile = StageProfile(initial: 0, stages: try Self.stages([(10, 10), (2, 4)]))
        #expect(abs(profile.firstTime(above: 0, atOrAfter: 0)! - 0) < 1e-6)
        #expect(abs(profile.firstTime(above: 5, atOrAfter: 0)! - 5) < 1e-6)
        #expect(profile.firstTime(above: 5, atOrAfter: 7) == 7, "already running")
        #expect(profile.firstTime(above: 5, atOrAfter: 11.9) == nil, "ramped down below 6 for good")
        #expect(profile.firstTime(above: 10, atOrAfter: 0) == nil, "the peak is 10: worker 10 never runs")
        #expect(profile.peak == 10)
    }

    /// Every malformed stage is an error before the run, naming what is wrong.
    @Test func badStagesAreRejectedBeforeTheRun() throws {
        #expect(throws: LoadError.self) { try LoadStage(duration: .zero, target: 10) }
        #expect(throws: LoadError.self) { try LoadStage(duration: .seconds(1), target: -1) }
        #expect(throws: LoadError.self) { try LoadStage(duration: .seconds(1), target: .infinity) }
        var options = LoadOptions()
        options.url = URL(string: "http://127.0.0.1/")!
        options.ramp = LoadRamp(.rate, stages: [])
        #expect(throws: LoadError.self) { try LoadRunner.validate(options) }
        options.ramp = LoadRamp(.rate, stages: try Self.stages([(10, 0)]))
        #expect(throws: LoadError.invalidArgument("the stages' rates never reach one request")) { try LoadRunner.validate(options) }
        options.ramp = LoadRamp(.concurrency, stages: try Self.stages([(10, 5)]))
        options.rate = 10
        #expect(throws: LoadError.self) { try LoadRunner.validate(options) }
        options.rate = nil
        options.requests = 100
        #expect(throws: LoadError.self) { try LoadRunner.validate(options) }
        options.requests = nil
        options.shard = try LoadShard(index: 0, count: 6)
        #expect(throws: LoadError.self) { try LoadRunner.validate(options) } // 5 workers over 6 shards
        options.shard = try LoadShard(index: 0, count: 5)
        try LoadRunner.validate(options)
    }

    /// Shards split a ramp of requests in flight exactly: worker numbers are dealt round-robin,
    /// so together they run the whole ramp's workers, each joining when the whole ramp reaches it.
    @Test func shardsSplitAClosedRampsWorkers() throws {
        var options = LoadOptions()
        options.url = URL(string: "http://127.0.0.1/")!
        options.ramp = LoadRamp(.concurrency, stages: try Self.stages([(10, 10), (5, 3)]))
        #expect(try LoadRunner(options: options).workerCount == 10)
        var total = 0
        for index in 0..<4 {
            options.shard = try LoadShard(index: index, count: 4)
            total += try LoadRunner(options: options).workerCount
        }
        #expect(total == 10)
    }

    /// A merge of a run's shards keeps its stages; runs with other stages have none in common.
    @Test func aMergeKeepsTheStagesItsPartsShare() throws {
        var part = LoadResult(target: "http://x/", model: .open, concurrency: 8)
        part.ramp = LoadRamp(.rate, stages: try Self.stages([(30, 100)]))
        var other = part
        #expect(LoadResult.merged([part, other])?.ramp == part.ramp)
        other.ramp = LoadRamp(.rate, stages: try Self.stages([(30, 200)]))
        #expect(LoadResult.merged([part, other])?.ramp == nil)
    }
}
