@testable import Courier
import CourierTestSupport
import Testing

/// Every transition of the per-transfer state machine, without sockets: admission, attachment,
/// body delivery, curl's re-sends, completion, cancellation, and what each end gives back.
@Suite struct TransferStateMachineTests {
    typealias Release = TransferStateMachine.Release
    /// What a transfer that reached curl gives back.
    static let attachedRelease = Release(leaveRegistry: true, returnSlot: true, detachHandle: true)
    /// Removed before curl finished it: the loop then runs curl's timer (``LoopDriver/timerMayBeDue()``).
    static let removedEarly = Release(leaveRegistry: true, returnSlot: true, detachHandle: true, removedEarly: true)

    /// Submitted, admitted and attached: a running transfer as curl drives it.
    static func running(_ delivery: TransferStateMachine.Delivery) -> Box<TransferStateMachine> {
        let machine = Box(TransferStateMachine(delivery: delivery))
        #expect(machine { $0.submit() })
        #expect(machine { $0.start() } == .attach)
        machine.value.attached()
        #expect(machine.value.isAttached)
        return machine
    }

    @Test func bufferedHappyPath() {
        let machine = Self.running(.buffered(limit: 100))
        #expect(machine { $0.receive(byteCount: 60, status: 200) } == .append)
        #expect(machine { $0.receive(byteCount: 40, status: 200) } == .append)
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: false, release: Self.attachedRelease))
        #expect(machine.value.isFinished)
        #expect(!machine.value.isAttached)
    }

    @Test func emptyBodyDeliversHeadAtFinish() {
        let machine = Self.running(.buffered(limit: 100))
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: true, release: Self.attachedRelease))
    }

    @Test func bodyOverLimitAbortsAndReportsBodyTooLarge() {
        let machine = Self.running(.buffered(limit: 100))
        #expect(machine { $0.receive(byteCount: 100, status: 200) } == .append)
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        // curl then reports a write error; the abort reason wins.
        let curlError = TransportError(.fileError, message: "write error")
        #expect(machine { $0.finish(curlError) }
            == .fail(.bodyTooLarge, headDelivered: true, requestStarted: false, release: Self.attachedRelease))
    }

    @Test func streamingDeliversHeadOncePausesAboveHighWaterAndResumesAtLowWater() {
        let machine = Self.running(.streaming(highWater: 100, lowWater: 50))
        #expect(machine { $0.receive(byteCount: 60, status: 200) } == .deliver(head: true, pause: false))
        #expect(machine { $0.receive(byteCount: 60, status: 200) } == .deliver(head: false, pause: true))
        #expect(machine { $0.receive(byteCount: 10, status: 200) } == .deliver(head: false, pause: false))
        #expect(machine { $0.consumed(byteCount: 60) } == .none) // 70 buffered, above low water
        #expect(machine { $0.consumed(byteCount: 60) } == .resumeReceiving) // 10 buffered
        #expect(machine { $0.consumed(byteCount: 10) } == .none)
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: false, release: Self.attachedRelease))
    }

    @Test func fileDeliveryWritesSuccessBodiesAndBuffersErrorBodies() {
        let ok = Self.running(.file(errorLimit: 10))
        #expect(ok { $0.receive(byteCount: 1000, status: 206) } == .writeToFile)
        #expect(ok { $0.receive(byteCount: 1000, status: 206) } == .writeToFile)

        let notFound = Self.running(.file(errorLimit: 10))
        #expect(notFound { $0.receive(byteCount: 5, status: 404) } == .append)
        #expect(notFound { $0.receive(byteCount: 6, status: 404) } == .abort)
    }

    @Test func localAbortReasonWinsOverCurlResult() {
        let machine = Self.running(.file(errorLimit: 10))
        machine.value.abort(TransportError(.fileError, message: "disk full"))
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        #expect(machine { $0.finish(TransportError(.unknown)) }
            == .fail(.fileError, headDelivered: false, requestStarted: false, release: Self.attachedRelease))
    }

    // MARK: Admission

    @Test func cancelBeforeSubmissionGivesNothingBackAndIsNeverSubmitted() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 10)))
        #expect(machine { $0.cancel() } == .fail(headDelivered: false, requestStarted: false, release: .nothing))
        #expect(!machine { $0.submit() })
        #expect(machine { $0.start() } == .none)
    }

    @Test func cancelWhileWaitingLeavesTheRegistryButHoldsNoSlot() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 10)))
        #expect(machine { $0.submit() })
        #expect(!machine { $0.submit() }) // once only
        #expect(machine { $0.cancel() }
            == .fail(headDelivered: false, requestStarted: false, release: Release(leaveRegistry: true)))
        // Its turn in the admission queue comes later: it takes no slot and no handle.
        #expect(machine { $0.start() } == .none)
        #expect(machine { $0.cancel() } == .none)
    }

    @Test func setupFailureBeforeAttachReturnsTheSlotButDetachesNothing() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 10)))
        _ = machine.value.submit()
        #expect(machine { $0.start() } == .attach)
        #expect(!machine.value.isAttached)
        #expect(machine { $0.cancel() } == .fail(headDelivered: false, requestStarted: false,
                                                 release: Release(leaveRegistry: true, returnSlot: true)))
    }

    @Test func cancelWhileRunningDetachesOnceAndIgnoresLateCurlEvents() {
        let machine = Self.running(.streaming(highWater: 10, lowWater: 5))
        _ = machine.value.receive(byteCount: 3, status: 200)
        #expect(machine { $0.cancel() } == .fail(headDelivered: true, requestStarted: false, release: Self.removedEarly))
        #expect(machine { $0.cancel() } == .none)
        #expect(machine { $0.finish(nil) } == .none)
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        #expect(machine { $0.consumed(byteCount: 3) } == .none)
    }

    @Test func curlFailureBeforeAnyByteReportsHeadNotDelivered() {
        let machine = Self.running(.streaming(highWater: 10, lowWater: 5))
        #expect(machine { $0.finish(.timedOut) }
            == .fail(.timedOut, headDelivered: false, requestStarted: false, release: Self.attachedRelease))
    }

    @Test func finishedTransferCannotBeCancelled() {
        let machine = Self.running(.buffered(limit: 10))
        _ = machine.value.finish(nil)
        #expect(machine { $0.cancel() } == .none)
    }

    // MARK: curl's silent re-send

    @Test func redirectIsNotAReSend() {
        let machine = Self.running(.buffered(limit: 10))
        #expect(machine { $0.requestWillBeSent(idempotent: false, url: "http://x/") } == .send)
        machine.value.responseBegan() // the 302
        #expect(machine { $0.requestWillBeSent(idempotent: false, url: "http://x/") } == .send)
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: true, release: Self.attachedRelease))
    }

    @Test func reSendOfANonIdempotentRequestIsRefusedAsConnectionLostAndResetsTheHandle() {
        let machine = Self.running(.buffered(limit: 10))
        #expect(machine { $0.requestWillBeSent(idempotent: false, url: "http://x/") } == .send)
        #expect(machine { $0.requestWillBeSent(idempotent: false, url: "http://x/") } == .refuse)
        var release = Self.attachedRelease
        release.resetHandle = true
        // curl reports its own abort; the refusal is what the caller sees.
        #expect(machine { $0.finish(TransportError(.unknown)) }
            == .fail(.connectionLost, headDelivered: false, requestStarted: true, release: release))
    }

    @Test func reSendOfAnIdempotentRequestGoesOutButStillResetsTheHandle() {
        let machine = Self.running(.buffered(limit: 10))
        #expect(machine { $0.requestWillBeSent(idempotent: true, url: "http://x/") } == .send)
        #expect(machine { $0.requestWillBeSent(idempotent: true, url: "http://x/") } == .resend)
        machine.value.responseBegan()
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: true, release: Release(
            leaveRegistry: true, returnSlot: true, detachHandle: true, resetHandle: true)))
    }

    @Test func failureAfterTheRequestWentOutSaysSo() {
        let machine = Self.running(.buffered(limit: 10))
        _ = machine.value.requestWillBeSent(idempotent: false, url: "http://x/")
        #expect(machine { $0.finish(.connectionLost) }
            == .fail(.connectionLost, headDelivered: false, requestStarted: true, release: Self.attachedRelease))
    }
}
