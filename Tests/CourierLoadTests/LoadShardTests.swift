@testable import CourierLoad
import Foundation
import CourierTestSupport
import Testing

/// Splitting a run: the shards together send exactly what one process would.
@Suite struct LoadShardTests {
    @Test func sharesAddUpToTheWhole() throws {
        for count in [1, 3, 4, 20] {
            for total in [0, 1, 7, 1000, 1001] {
                let shares = try (0..<count).map { try LoadShard(index: $0, count: count).share(of: total) }
                #expect(shares.reduce(0, +) == total)
                #expect(shares.max()! - shares.min()! <= 1, "dealt evenly")
            }
        }
    }

    @Test func shardsAreParsedAndChecked() throws {
        #expect(try LoadShard(parsing: "3/20") == LoadShard(index: 3, count: 20))
        for bad in ["20/20", "-1/4", "1/0", "1", "a/b", "1/2/3", ""] {
            #expect(throws: LoadError.self) { try LoadShard(parsing: bad) }
        }
    }

    /// Every request number once across the shards: the same numbers as an unsharded schedule.
    @Test func requestNumbersInterleaveExactly() throws {
        func numbers(_ shard: LoadShard?, rate: StageProfile?) -> [Int: UInt64?] {
            let schedule = LoadSchedule(start: 1_000, limit: .requests(103), rate: rate, shard: shard)
            var seen: [Int: UInt64?] = [:]
            while let slot = schedule.next() { seen[slot.number] = slot.intendedStart }
            return seen
        }
        let ramp = StageProfile(initial: 10, stages: [try LoadStage(duration: .seconds(1), target: 150), try LoadStage(duration: .seconds(1), target: 40)])
        for rate in [nil, StageProfile(constant: 250), ramp] {
            let whole = numbers(nil, rate: rate)
            #expect(whole.count == 103)
            var union: [Int: UInt64?] = [:]
            for index in 0..<4 {
                let part = numbers(try LoadShard(index: index, count: 4), rate: rate)
                #expect(part.count == (try LoadShard(index: index, count: 4)).share(of: 103))
                #expect(Set(part.keys).isDisjoint(with: union.keys))
                union.merge(part) { first, _ in first }
            }
            #expect(union == whole, "same numbers and, in the open model, the same intended starts")
        }
    }

    /// An open-model run for a duration: the shards' slots are the whole run's slots.
    @Test func theOpenModelsSlotsWithinADurationAreSplitExactly() throws {
        func count(_ shard: LoadShard?, _ rate: StageProfile) -> Int {
            let schedule = LoadSchedule(start: 0, limit: .duration(nanoseconds: 2_000_000_000), rate: rate, shard: shard)
            var slots = 0
            while schedule.next() != nil { slots += 1 }
            return slots
        }
        // A ramp from 0 to 333/s over 2 s has 333 slots: the area under the rate.
        let ramp = StageProfile(initial: 0, stages: [try LoadStage(duration: .seconds(2), target: 333)])
        for (rate, slots) in [(StageProfile(constant: 333), 666), (ramp, 333)] {
            let parts = try (0..<7).map { count(try LoadShard(index: $0, count: 7), rate) }
            #expect(parts.reduce(0, +) == count(nil, rate))
            #expect(count(nil, rate) == slots)
        }
    }

    /// The mix follows the weights to within a request or two, and is a function of the numbers.
    @Test func theScenarioMixIsAFunctionOfTheRequestNumber() throws {
        var options = LoadOptions()
        options.scenario = Scenario(requests: [
            .init(name: "a", url: "http://127.0.0.1:1/a", weight: 5),
            .init(name: "b", url: "http://127.0.0.1:1/b", weight: 3),
            .init(name: "c", url: "http://127.0.0.1:1/c", weight: 2),
        ])
        let plan = try LoadPlan(options: options, defaultURL: nil)
        var counts = [0, 0, 0]
        for number in 0..<10_000 { counts[plan.pick(number: number)] += 1 }
        #expect(abs(counts[0] - 5000) <= 2 && abs(counts[1] - 3000) <= 2 && abs(counts[2] - 2000) <= 2, "\(counts)")
        var sharded = [0, 0, 0]
        for index in 0..<3 {
            let shard = try LoadShard(index: index, count: 3)
            for local in 0..<shard.share(of: 10_000) { sharded[plan.pick(number: shard.globalNumber(local))] += 1 }
        }
        #expect(sharded == counts)
    }

    @Test func tooFewInFlightForTheShardsIsRejected() throws {
        var options = LoadOptions()
        options.url = URL(string: "http://127.0.0.1:1/")
        options.concurrency = 3
        options.shard = try LoadShard(index: 0, count: 4)
        #expect(throws: LoadError.self) { try LoadRunner(options: options) }
    }

    @Test func mergingShardsChecksThatEachIsThereOnce() throws {
        func part(_ index: Int?, of count: Int = 3) throws -> LoadResult {
            var result = LoadResult(target: "t", model: .open, concurrency: 1, rate: 100.0 / 3, durationSeconds: 1, requests: 10)
            result.shard = try index.map { try LoadShard(index: $0, count: count) }
            return result
        }
        let merged = try #require(try LoadResult.mergedShards([part(2), part(0), part(1)]))
        #expect(merged.requests == 30 && merged.runs == 3 && merged.shard == nil)
        #expect(merged.rate == 100, "a third of the rate three times is the rate")
        #expect(throws: LoadError.invalidResult("shard 1/3 is missing")) { try LoadResult.mergedShards([part(0), part(2)]) }
        #expect(throws: LoadError.invalidResult("shard 0/3 appears more than once")) {
            try LoadResult.mergedShards([part(0), part(0), part(1), part(2)])
        }
        #expect(throws: LoadError.self) { try LoadResult.mergedShards([part(0), part(1), part(2), part(nil)]) }
        #expect(throws: LoadError.self) { try LoadResult.mergedShards([part(0, of: 2), part(1, of: 2), part(0)]) }
    }
}
