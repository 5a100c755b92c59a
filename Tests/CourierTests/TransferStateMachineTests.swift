@testable import Courier
import Testing

/// Every transition of the per-transfer state machine, without sockets.
@Suite struct TransferStateMachineTests {
    @Test func bufferedHappyPath() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 100)))
        #expect(machine { $0.start() } == .attach)
        #expect(machine { $0.receive(byteCount: 60, status: 200) } == .append)
        #expect(machine { $0.receive(byteCount: 40, status: 200) } == .append)
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: false))
        #expect(machine.value.isFinished)
    }

    @Test func emptyBodyDeliversHeadAtFinish() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 100)))
        _ = machine.value.start()
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: true))
    }

    @Test func bodyOverLimitAbortsAndReportsBodyTooLarge() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 100)))
        _ = machine.value.start()
        #expect(machine { $0.receive(byteCount: 100, status: 200) } == .append)
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        // curl then reports a write error; the abort reason wins.
        let curlError = TransportError(.fileError, message: "write error")
        #expect(machine { $0.finish(curlError) } == .fail(.bodyTooLarge, headDelivered: true))
    }

    @Test func streamingDeliversHeadOncePausesAboveHighWaterAndResumesAtLowWater() {
        let machine = Box(TransferStateMachine(delivery: .streaming(highWater: 100, lowWater: 50)))
        _ = machine.value.start()
        #expect(machine { $0.receive(byteCount: 60, status: 200) } == .deliver(head: true, pause: false))
        #expect(machine { $0.receive(byteCount: 60, status: 200) } == .deliver(head: false, pause: true))
        #expect(machine { $0.receive(byteCount: 10, status: 200) } == .deliver(head: false, pause: false))
        #expect(machine { $0.consumed(byteCount: 60) } == .none) // 70 buffered, above low water
        #expect(machine { $0.consumed(byteCount: 60) } == .resumeReceiving) // 10 buffered
        #expect(machine { $0.consumed(byteCount: 10) } == .none)
        #expect(machine { $0.finish(nil) } == .succeed(deliverHead: false))
    }

    @Test func fileDeliveryWritesSuccessBodiesAndBuffersErrorBodies() {
        let ok = Box(TransferStateMachine(delivery: .file(errorLimit: 10)))
        _ = ok.value.start()
        #expect(ok { $0.receive(byteCount: 1000, status: 206) } == .writeToFile)
        #expect(ok { $0.receive(byteCount: 1000, status: 206) } == .writeToFile)

        let notFound = Box(TransferStateMachine(delivery: .file(errorLimit: 10)))
        _ = notFound.value.start()
        #expect(notFound { $0.receive(byteCount: 5, status: 404) } == .append)
        #expect(notFound { $0.receive(byteCount: 6, status: 404) } == .abort)
    }

    @Test func localAbortReasonWinsOverCurlResult() {
        let machine = Box(TransferStateMachine(delivery: .file(errorLimit: 10)))
        _ = machine.value.start()
        machine.value.abort(TransportError(.fileError, message: "disk full"))
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        #expect(machine { $0.finish(TransportError(.unknown)) } == .fail(.fileError, headDelivered: false))
    }

    @Test func cancelWhileQueuedNeverAttaches() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 10)))
        #expect(machine { $0.cancel() } == .failQueued)
        #expect(machine { $0.start() } == .none)
        #expect(machine { $0.cancel() } == .none)
    }

    @Test func cancelWhileRunningDetachesOnceAndIgnoresLateCurlEvents() {
        let machine = Box(TransferStateMachine(delivery: .streaming(highWater: 10, lowWater: 5)))
        _ = machine.value.start()
        _ = machine.value.receive(byteCount: 3, status: 200)
        #expect(machine { $0.cancel() } == .detachAndFail(headDelivered: true))
        #expect(machine { $0.cancel() } == .none)
        #expect(machine { $0.finish(nil) } == .none)
        #expect(machine { $0.receive(byteCount: 1, status: 200) } == .abort)
        #expect(machine { $0.consumed(byteCount: 3) } == .none)
    }

    @Test func curlFailureBeforeAnyByteReportsHeadNotDelivered() {
        let machine = Box(TransferStateMachine(delivery: .streaming(highWater: 10, lowWater: 5)))
        _ = machine.value.start()
        #expect(machine { $0.finish(.timedOut) } == .fail(.timedOut, headDelivered: false))
    }

    @Test func finishedTransferCannotBeCancelled() {
        let machine = Box(TransferStateMachine(delivery: .buffered(limit: 10)))
        _ = machine.value.start()
        _ = machine.value.finish(nil)
        #expect(machine { $0.cancel() } == .none)
    }
}
