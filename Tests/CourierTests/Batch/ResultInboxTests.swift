@testable import Courier
import CourierSync
import Testing

/// `ResultInbox`: results move from the producers into the consumer's array, in order, each
/// exactly once (the inbox takes them by move, so a mistake would show as a leak or a double free).
@Suite struct ResultInboxTests {
    final class Tracked: Sendable {
        let value: Int
        let released: LockedValue<Int>
        init(_ value: Int, released: LockedValue<Int>) {
            self.value = value
            self.released = released
        }
        deinit { released.withLock { $0 += 1 } }
    }

    @Test func deliveredResultsArriveInOrderAndAreReleasedOnce() async {
        let released = LockedValue(0)
        let inbox = ResultInbox<(index: Int, result: Result<Tracked, any Error>)>(loop: nil)
        do {
            for index in 0..<5 { inbox.deliver((index, .success(Tracked(index * 10, released: released)))) }
            inbox.finish()
            var taken = await inbox.take([]) {}
            #expect(taken.map(\.index) == [0, 1, 2, 3, 4])
            #expect(taken.compactMap { try? $0.result.get().value } == [0, 10, 20, 30, 40])
            #expect(released.withLock { $0 } == 0) // still held by the consumer's array
            taken = await inbox.take(taken) {}
            #expect(taken.isEmpty) // finished: the spent array came back emptied
        }
        #expect(released.withLock { $0 } == 5)
    }

    /// The consumer's hand-off is reversed by moves (`reverseByMoving`), then popped: every
    /// result comes out once, in order, and is released once.
    @Test func aHandOffReversedByMovesKeepsEachResultOnce() {
        let released = LockedValue(0)
        do {
            for count in [0, 1, 2, 5] {
                var taken = (0..<count).map { (index: $0, result: Result<Tracked, any Error>.success(Tracked($0, released: released))) }
                taken.reverseByMoving()
                var order: [Int] = []
                while let element = taken.popLast() { order.append(element.index) }
                #expect(order == Array(0..<count))
            }
        }
        #expect(released.withLock { $0 } == 8)
    }
}
