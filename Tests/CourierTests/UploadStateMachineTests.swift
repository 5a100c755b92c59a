@testable import Courier
import Foundation
import Testing

/// The resumable upload protocol as a pure state machine, without IO.
@Suite struct UploadStateMachineTests {
    let session = URL(string: "https://upload.example.com/s?upload_id=1")!

    func machine(total: Int64 = 1000, chunk: Int64 = 400, restart: Bool = true) -> Box<UploadStateMachine> {
        Box(UploadStateMachine(total: total, chunkSize: chunk, restartWhenSessionExpires: restart))
    }

    @Test func initiateThenChunksThenFinish() {
        let upload = machine()
        #expect(upload { $0.start() } == .initiate)
        #expect(upload { $0.initiated(sessionURI: session) } == .sendChunk(0..<400))
        #expect(upload { $0.incomplete(lastByte: 399) } == .sendChunk(400..<800))
        #expect(upload { $0.incomplete(lastByte: 799) } == .sendChunk(800..<1000))
        #expect(upload { $0.completed() } == .finish)
        #expect(upload.value.isFinished)
        #expect(upload.value.offset == 1000)
    }

    @Test func aServerThatKeptFewerBytesThanSentIsCaughtUp() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        #expect(upload { $0.incomplete(lastByte: 99) } == .sendChunk(100..<500))
        #expect(upload { $0.incomplete(lastByte: nil) } == .sendChunk(0..<400)) // it kept nothing
    }

    @Test func afterAFailureTheOffsetIsAskedFor() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.incomplete(lastByte: 399) }
        #expect(upload { $0.failed(sessionGone: false) } == .backOff)
        #expect(upload { $0.retryAfterBackoff() } == .queryStatus)
        #expect(upload { $0.incomplete(lastByte: 599) } == .sendChunk(600..<1000))
        #expect(upload { $0.completed() } == .finish)
    }

    @Test func aStatusQueryCanFindTheUploadComplete() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.failed(sessionGone: false) }
        #expect(upload { $0.retryAfterBackoff() } == .queryStatus)
        #expect(upload { $0.completed() } == .finish)
    }

    @Test func anExpiredSessionRestartsFromZeroOrFails() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.incomplete(lastByte: 399) }
        #expect(upload { $0.failed(sessionGone: true) } == .initiate)
        #expect(upload.value.offset == 0)
        #expect(upload { $0.initiated(sessionURI: session) } == .sendChunk(0..<400))
        for _ in 0..<2 {
            _ = upload { $0.failed(sessionGone: true) }
            _ = upload { $0.initiated(sessionURI: session) }
        }
        #expect(upload { $0.failed(sessionGone: true) } == .fail(.sessionExpired)) // the fourth time

        let strict = machine(restart: false)
        _ = strict { $0.start() }
        _ = strict { $0.initiated(sessionURI: session) }
        #expect(strict { $0.failed(sessionGone: true) } == .fail(.sessionExpired))
    }

    @Test func pausingLetsTheChunkInFlightFinishAndResumesWithoutAStatusQuery() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        #expect(upload { $0.pause() } == nil) // a chunk is in flight
        #expect(upload { $0.incomplete(lastByte: 399) } == .pause)
        #expect(upload { $0.resume() } == .sendChunk(400..<800))
    }

    @Test func pausingDuringABackOffPausesAtOnceAndResumesByAsking() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.failed(sessionGone: false) }
        #expect(upload { $0.pause() } == .pause)
        #expect(upload { $0.resume() } == .queryStatus)
    }

    @Test func aResumedSessionAsksTheServerFirst() {
        let upload = Box(UploadStateMachine(resuming: session, offset: 400, total: 1000, chunkSize: 400, restartWhenSessionExpires: true))
        #expect(upload { $0.start() } == .queryStatus)
        #expect(upload { $0.incomplete(lastByte: 499) } == .sendChunk(500..<900))
    }

    @Test func protocolViolationsFail() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        #expect(upload { $0.incomplete(lastByte: 450) } == .fail(.protocolViolation)) // beyond what was sent
        let beyond = machine()
        _ = beyond { $0.start() }
        _ = beyond { $0.initiated(sessionURI: session) }
        _ = beyond { $0.failed(sessionGone: false) }
        _ = beyond { $0.retryAfterBackoff() }
        #expect(beyond { $0.incomplete(lastByte: 5000) } == .fail(.protocolViolation)) // beyond the total
        let early = machine()
        #expect(early { $0.completed() } == .fail(.protocolViolation))
    }

    @Test func emptyUploadsSendOneEmptyFinalChunk() {
        let upload = machine(total: 0)
        _ = upload { $0.start() }
        #expect(upload { $0.initiated(sessionURI: session) } == .sendChunk(0..<0))
        #expect(UploadStateMachine.contentRange(0..<0, total: 0) == "bytes */0")
    }

    @Test func headersOfTheProtocol() {
        #expect(UploadStateMachine.contentRange(0..<262_144, total: 1_000_000) == "bytes 0-262143/1000000")
        #expect(UploadStateMachine.lastAcknowledgedByte(fromRange: "bytes=0-524287") == .some(524_287))
        #expect(UploadStateMachine.lastAcknowledgedByte(fromRange: nil) == .some(nil))
        #expect(UploadStateMachine.lastAcknowledgedByte(fromRange: "bytes=5-9") == nil)
    }

    @Test func chunkSizesAreMultiplesOf256KiB() {
        var parameters = UploadParameters(data: Data(), mimeType: "a/b")
        parameters.chunkSize = 1
        #expect(parameters.effectiveChunkSize == 262_144)
        parameters.chunkSize = 300_000
        #expect(parameters.effectiveChunkSize == 524_288)
        #expect(UploadParameters(data: Data(), mimeType: "a/b").effectiveChunkSize == 8 << 20)
    }

    @Test func checksumsMatchKnownVectors() {
        let accumulator = ChecksumAccumulator()
        accumulator.update(Data("123456789".utf8))
        let sums = accumulator.finish()
        #expect(sums.crc32c == 0xE306_9283)
        #expect(sums.md5Hex == "25f9e794323b453885f5181f1b624d0b")
        let empty = ChecksumAccumulator().finish()
        #expect(empty.crc32c == 0)
        #expect(empty.crc32cBase64 == "AAAAAA==")
        #expect(empty.md5Base64 == "1B2M2Y8AsgTpgAmY7PhCfg==")
        let split = ChecksumAccumulator()
        split.update(Data("1234".utf8))
        split.update(Data("56789".utf8))
        #expect(split.finish() == sums)
    }
}
