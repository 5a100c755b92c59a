@testable import Courier
import CourierTestSupport
import Testing

@Suite struct AdmissionQueueTests {
    @Test func admitsUpToThePerHostLimitThenQueuesInOrder() {
        let queue = Box(AdmissionQueue<Int, String>(perKeyLimit: 2, totalLimit: 10))
        #expect(queue { $0.admit(1, key: "a") })
        #expect(queue { $0.admit(2, key: "a") })
        #expect(!queue { $0.admit(3, key: "a") })
        #expect(!queue { $0.admit(4, key: "a") })
        #expect(queue { $0.nextAdmissible() } == nil)
        queue.value.release(key: "a")
        #expect(queue { $0.nextAdmissible() }?.element == 3)
        #expect(queue { $0.nextAdmissible() } == nil)
        queue.value.release(key: "a")
        #expect(queue { $0.nextAdmissible() }?.element == 4)
        #expect(queue.value.waitingCount == 0)
    }

    @Test func oneBusyHostDoesNotBlockAnother() {
        let queue = Box(AdmissionQueue<String, String>(perKeyLimit: 1, totalLimit: 10))
        #expect(queue { $0.admit("a1", key: "a") })
        #expect(!queue { $0.admit("a2", key: "a") })
        #expect(queue { $0.admit("b1", key: "b") })
    }

    @Test func totalLimitAdmitsTheOldestWaiterAcrossHosts() {
        let queue = Box(AdmissionQueue<String, String>(perKeyLimit: 5, totalLimit: 2))
        #expect(queue { $0.admit("a1", key: "a") })
        #expect(queue { $0.admit("b1", key: "b") })
        #expect(!queue { $0.admit("b2", key: "b") })
        #expect(!queue { $0.admit("a2", key: "a") })
        queue.value.release(key: "a")
        #expect(queue { $0.nextAdmissible() }?.element == "b2")
        queue.value.release(key: "b")
        #expect(queue { $0.nextAdmissible() }?.element == "a2")
        #expect(queue.value.runningTotal == 2)
    }

    @Test func aNewcomerDoesNotOvertakeWaitersOfItsHost() {
        let queue = Box(AdmissionQueue<Int, String>(perKeyLimit: 1, totalLimit: 1))
        #expect(queue { $0.admit(1, key: "a") })
        #expect(!queue { $0.admit(2, key: "a") })
        queue.value.release(key: "a")
        #expect(!queue { $0.admit(3, key: "a") }) // 2 waits first
        #expect(queue { $0.nextAdmissible() }?.element == 2)
    }

    /// One key's count is kept apart from the others' (the hot key); the limits must hold for
    /// every key as that place passes from one key to another.
    @Test func perKeyLimitsHoldAsKeysTakeTurnsAtTheFront() {
        let queue = Box(AdmissionQueue<String, String>(perKeyLimit: 2, totalLimit: 10))
        #expect(queue { $0.admit("a1", key: "a") })
        #expect(queue { $0.admit("a2", key: "a") })
        #expect(!queue { $0.admit("a3", key: "a") })
        #expect(queue { $0.admit("b1", key: "b") })
        #expect(queue { $0.admit("b2", key: "b") })
        #expect(!queue { $0.admit("b3", key: "b") })
        queue.value.release(key: "a")
        #expect(queue { $0.nextAdmissible() }?.element == "a3")
        queue.value.release(key: "a")
        queue.value.release(key: "a") // "a" runs nothing now: "b" may take its place
        #expect(queue { $0.nextAdmissible() } == nil) // "b" still runs two
        queue.value.release(key: "b")
        #expect(queue { $0.nextAdmissible() }?.element == "b3")
        #expect(queue { $0.nextAdmissible() } == nil)
        #expect(!queue { $0.admit("b4", key: "b") })
        #expect(queue { $0.admit("a4", key: "a") })
        #expect(queue { $0.admit("a5", key: "a") })
        #expect(!queue { $0.admit("a6", key: "a") })
        #expect(queue.value.runningTotal == 4)
        queue.value.release(key: "b")
        queue.value.release(key: "b")
        #expect(queue { $0.nextAdmissible() }?.element == "b4")
        #expect(queue.value.runningTotal == 3)
    }

    @Test func removeAllWaitingReturnsArrivalOrder() {
        let queue = Box(AdmissionQueue<Int, String>(perKeyLimit: 1, totalLimit: 1))
        _ = queue.value.admit(0, key: "a")
        _ = queue.value.admit(1, key: "b")
        _ = queue.value.admit(2, key: "a")
        _ = queue.value.admit(3, key: "c")
        #expect(queue { $0.removeAllWaiting() } == [1, 2, 3])
        #expect(queue.value.waitingCount == 0)
    }
}
