@testable import Courier
import Testing

/// ``DeadlineSchedule`` against a plain model: whatever is scheduled, removed and taken, nodes
/// come out in deadline order, none before it is due, and the links stay whole.
@Suite struct DeadlineScheduleTests {
    final class Node: DeadlineScheduled {
        let name: Int
        var deadlineLinks = DeadlineLinks<Node>()
        init(_ name: Int) { self.name = name }
    }

    @Test func nodesSharingATimeoutAreDueInTheOrderTheyWereScheduled() {
        var schedule = DeadlineSchedule<Node>(kind: .total)
        let nodes = (0..<5).map(Node.init)
        for (index, node) in nodes.enumerated() { schedule.schedule(node, interval: 100, now: UInt64(index)) }
        #expect(schedule.earliest == 100)
        #expect(schedule.takeDue(now: 99) == nil, "nothing is due before its deadline")
        #expect(schedule.takeDue(now: 102)?.name == 0)
        #expect(schedule.takeDue(now: 102)?.name == 1)
        #expect(schedule.takeDue(now: 102)?.name == 2)
        #expect(schedule.takeDue(now: 102) == nil)
        #expect(schedule.count == 2)
        #expect(schedule.earliest == 103)
    }

    @Test func removingTheHeadAMiddleNodeOrTheTailKeepsTheRestInOrder() {
        var schedule = DeadlineSchedule<Node>(kind: .connect)
        let nodes = (0..<6).map(Node.init)
        for (index, node) in nodes.enumerated() { schedule.schedule(node, interval: 10, now: UInt64(index)) }
        schedule.remove(nodes[0])
        schedule.remove(nodes[3])
        schedule.remove(nodes[5])
        schedule.remove(nodes[3]) // not scheduled any more: nothing
        #expect(!nodes[3].deadlineLinks.connect.isScheduled)
        var taken: [Int] = []
        while let node = schedule.takeDue(now: .max - 1) { taken.append(node.name) }
        #expect(taken == [1, 2, 4])
        #expect(schedule.count == 0 && schedule.earliest == nil)
        // Links of one kind leave the other alone.
        #expect(nodes.allSatisfy { !$0.deadlineLinks.total.isScheduled })
    }

    @Test func aDeadlinePastTheEndOfTheClockIsNeverScheduled() {
        var schedule = DeadlineSchedule<Node>(kind: .total)
        let node = Node(1)
        schedule.schedule(node, interval: .max, now: 5)
        schedule.schedule(Node(2), interval: .max - 5, now: 5)
        #expect(schedule.earliest == nil)
        #expect(!node.deadlineLinks.total.isScheduled)
    }

    @Test func aFifthTimeoutGoesToTheOrderedListAndAnEmptiedListIsTakenOver() {
        var schedule = DeadlineSchedule<Node>(kind: .total)
        let intervals: [UInt64] = [50, 40, 30, 20, 10, 5]
        let nodes = intervals.indices.map(Node.init)
        for (node, interval) in zip(nodes, intervals) { schedule.schedule(node, interval: interval, now: 0) }
        let keyed = DeadlineSchedule<Node>.keyedLists
        #expect(nodes[4].deadlineLinks.total.list == keyed && nodes[5].deadlineLinks.total.list == keyed)
        #expect(schedule.takeDue(now: 100)?.name == 5)
        #expect(schedule.takeDue(now: 100)?.name == 4)
        #expect(schedule.takeDue(now: 100)?.name == 3)
        // The list of 20 is empty now: a new timeout takes it over rather than the ordered list.
        let late = Node(9)
        schedule.schedule(late, interval: 7, now: 100)
        #expect(late.deadlineLinks.total.list < keyed)
        #expect(schedule.takeDue(now: 106)?.name == 2)
        #expect(schedule.takeDue(now: 106)?.name == 1)
        #expect(schedule.takeDue(now: 106)?.name == 0)
        #expect(schedule.takeDue(now: 106) == nil)
        #expect(schedule.takeDue(now: 107)?.name == 9)
    }

    /// Random schedules, removals and takes over many timeouts (more than there are keyed
    /// lists), checked step by step against a sorted array.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func agreesWithASortedModel(seed: UInt64) {
        // A seeded LCG's high bits, so a failing case repeats.
        var state = seed
        func nextRandom() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var schedule = DeadlineSchedule<Node>(kind: .total)
        let intervals: [UInt64] = [100, 250, 100, 1000, 30, 5000, 250, 7, 777, 64]
        var model: [(due: UInt64, order: Int, node: Node)] = []
        var now: UInt64 = 1000
        var order = 0
        for step in 0..<3000 {
            switch nextRandom() % 10 {
            case 0..<5:
                let node = Node(step)
                let interval = intervals[Int(nextRandom() % UInt64(intervals.count))]
                schedule.schedule(node, interval: interval, now: now)
                model.append((now + interval, order, node))
                order += 1
            case 5..<7:
                guard !model.isEmpty else { continue }
                let index = Int(nextRandom() % UInt64(model.count))
                schedule.remove(model.remove(at: index).node)
            default:
                now += nextRandom() % 40
                // Equal deadlines may come out in either order across lists; by deadline they agree.
                model.sort { ($0.due, $0.order) < ($1.due, $1.order) }
                while let node = schedule.takeDue(now: now) {
                    let first = model.first!
                    #expect(first.due <= now)
                    let index = model.firstIndex { $0.node === node }!
                    #expect(model[index].due == first.due, "took a node due at \(model[index].due) before one due at \(first.due)")
                    model.remove(at: index)
                }
                #expect(model.allSatisfy { $0.due > now }, "a due node was left behind")
            }
            #expect(schedule.count == model.count)
            #expect(schedule.earliest == model.map(\.due).min())
        }
    }
}
