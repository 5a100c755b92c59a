@testable import Courier
import Foundation
import CourierTestSupport
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

    /// Chunks that take the server past no byte it held before: a server that keeps nothing, or
    /// one that loses what it kept as often as it keeps it. The fifth in a row ends the upload;
    /// a chunk that passes the most the server held starts the count again.
    @Test(arguments: [[nil, nil, nil, nil, nil], [399, nil, 399, nil, 399, nil], [99, 99, 99, 99, 99, 99]] as [[Int64?]])
    func chunksThatTakeTheServerNoFurtherEndTheUpload(acknowledgements: [Int64?]) {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        var outcome = UploadStateMachine.Action.pause
        for lastByte in acknowledgements {
            outcome = upload { $0.incomplete(lastByte: lastByte) }
            if case .fail = outcome { break }
        }
        guard case .fail(let error) = outcome else {
            Issue.record("\(acknowledgements) went on: \(outcome)")
            return
        }
        #expect(error.code == .protocolViolation)
        #expect(upload.value.chunksWithoutProgress == UploadStateMachine.maxChunksWithoutProgress)
    }

    @Test func progressStartsTheCountAgain() {
        let upload = machine(total: 2000, chunk: 400)
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        for _ in 0..<4 { #expect(upload { $0.incomplete(lastByte: nil) } == .sendChunk(0..<400)) }
        #expect(upload { $0.incomplete(lastByte: 199) } == .sendChunk(200..<600)) // fewer than sent, still progress
        for _ in 0..<4 { #expect(upload { $0.incomplete(lastByte: 199) } == .sendChunk(200..<600)) }
        #expect(upload.value.chunksWithoutProgress == 4)
        // A session that vanished starts over from zero: its chunks are progress again.
        #expect(upload { $0.failed(sessionGone: true) } == .initiate)
        #expect(upload { $0.initiated(sessionURI: session) } == .sendChunk(0..<400))
        #expect(upload { $0.incomplete(lastByte: 99) } == .sendChunk(100..<500))
        #expect(upload.value.chunksWithoutProgress == 0)
    }

    /// `Range: bytes=0-9223372036854775807` (the last byte's successor overflowed, a trap) and
    /// negative offsets are protocol violations, whatever the total; an unknown total too.
    @Test(arguments: [Int64.max, -2, 1000, 5_000])
    func anAcknowledgementPastTheBytesIsAViolation(lastByte: Int64) {
        for total in [1000, nil] as [Int64?] {
            let upload = Box(UploadStateMachine(total: total, chunkSize: 400, restartWhenSessionExpires: true))
            _ = upload { $0.start() }
            _ = upload { $0.initiated(sessionURI: session) }
            guard case .fail(let error) = upload({ $0.incomplete(lastByte: lastByte) }) else {
                Issue.record("\(lastByte) of \(String(describing: total)) was taken")
                continue
            }
            #expect(error.code == .protocolViolation)
        }
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

    /// A final answer cut on the way: the object exists, so status queries read it, up to three;
    /// a fourth unreadable answer finishes and lets decoding say why.
    @Test func anUnreadableFinalAnswerIsAskedForAgain() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.incomplete(lastByte: 399) }
        _ = upload { $0.incomplete(lastByte: 799) }
        #expect(upload { $0.completedUnreadably() } == .queryStatus)
        #expect(upload.value.offset == 1000 && !upload.value.offsetKnown)
        #expect(upload { $0.completedUnreadably() } == .queryStatus)
        #expect(upload { $0.completedUnreadably() } == .queryStatus)
        #expect(upload { $0.completedUnreadably() } == .finish)
        #expect(upload.value.isFinished)
    }

    /// java-storage's S.1: a 200 to a chunk that does not end the upload means the session was
    /// completed with bytes this upload never sent. Known or unknown total, readable or not.
    @Test(arguments: [Int64(1000), nil], [false, true])
    func aTwoHundredToAChunkThatDoesNotEndTheUploadIsAViolation(total: Int64?, unreadable: Bool) {
        let upload = Box(UploadStateMachine(total: total, chunkSize: 400, restartWhenSessionExpires: true))
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        if total == nil { #expect(upload { $0.sourceRead(available: 401, ended: false) } == .sendChunk(0..<400)) }
        let answer = upload { unreadable ? $0.completedUnreadably() : $0.completed() }
        guard case .fail(let error) = answer else {
            Issue.record("a 200 to bytes 0-399 of \(total.map(String.init) ?? "*") was taken: \(answer)")
            return
        }
        #expect(error.code == .protocolViolation)
        #expect(!upload.value.isFinished)
    }

    @Test func anUnreadableFinalAnswerHonoursAPauseAndArrivesOnlyInFlight() {
        let upload = machine()
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.incomplete(lastByte: 399) }
        #expect(upload { $0.incomplete(lastByte: 799) } == .sendChunk(800..<1000))
        #expect(upload { $0.pause() } == nil, "the final chunk is in flight")
        #expect(upload { $0.completedUnreadably() } == .pause)
        #expect(upload { $0.resume() } == .queryStatus)
        #expect(upload { $0.completed() } == .finish)

        let idle = machine()
        let answer = idle { $0.completedUnreadably() }
        guard case .fail(let error) = answer else {
            Issue.record("an answer before any request must fail")
            return
        }
        #expect(error.code == .protocolViolation)
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

    @Test func aSourceOfUnknownSizeIsReadOneBytePastEachChunk() {
        let upload = Box(UploadStateMachine(total: nil, chunkSize: 400, restartWhenSessionExpires: true))
        _ = upload { $0.start() }
        #expect(upload { $0.initiated(sessionURI: session) } == .readSource(through: 401))
        #expect(upload { $0.sourceRead(available: 401, ended: false) } == .sendChunk(0..<400))
        #expect(UploadStateMachine.contentRange(0..<400, total: upload.value.total) == "bytes 0-399/*")
        #expect(!upload.value.isFinal(0..<400))
        #expect(upload { $0.incomplete(lastByte: 399) } == .readSource(through: 801))
        #expect(upload { $0.sourceRead(available: 650, ended: true) } == .sendChunk(400..<650))
        #expect(upload.value.total == 650 && upload.value.isFinal(400..<650))
        #expect(UploadStateMachine.contentRange(400..<650, total: upload.value.total) == "bytes 400-649/650")
        #expect(upload { $0.completed() } == .finish)
        #expect(upload.value.offset == 650)
    }

    @Test func aStreamCannotStartOverOnceBytesWereAcknowledged() {
        var machine = UploadStateMachine(total: nil, chunkSize: 400, restartWhenSessionExpires: true)
        machine.rewindable = false
        let upload = Box(machine)
        _ = upload { $0.start() }
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.sourceRead(available: 1000, ended: false) }
        #expect(upload { $0.failed(sessionGone: true) } == .initiate) // nothing acknowledged yet: the buffer has byte 0
        _ = upload { $0.initiated(sessionURI: session) }
        _ = upload { $0.incomplete(lastByte: 399) }
        #expect(upload { $0.failed(sessionGone: true) } == .fail(.sessionExpired))
    }

    @Test func aSourceThatEndsBeforeWhatTheServerHoldsIsAViolation() {
        let upload = Box(UploadStateMachine(resuming: session, offset: 500, total: nil, chunkSize: 400, restartWhenSessionExpires: true))
        #expect(upload { $0.start() } == .queryStatus)
        #expect(upload { $0.incomplete(lastByte: 499) } == .readSource(through: 901))
        #expect(upload { $0.sourceRead(available: 300, ended: true) } == .fail(.protocolViolation))
    }

    @Test func chunkSizesFollowTheThroughput() {
        var sizer = ChunkSizer(initial: 8 << 20, maximum: 128 << 20)
        #expect(sizer.record(bytes: 8 << 20, elapsed: .milliseconds(10)) == 32 << 20) // fast: 4× at most
        #expect(sizer.record(bytes: 32 << 20, elapsed: .milliseconds(10)) == 128 << 20)
        #expect(sizer.record(bytes: 128 << 20, elapsed: .milliseconds(10)) == 128 << 20) // the maximum
        #expect(sizer.record(bytes: 128 << 20, elapsed: .seconds(8)) == 16 << 20) // 16 MiB/s: a second's worth
        #expect(sizer.record(bytes: 16 << 20, elapsed: .seconds(10)) == 8 << 20) // never below the initial size
        #expect(sizer.record(bytes: 1 << 20, elapsed: .seconds(10)) == 8 << 20) // a short last chunk says nothing
        let odd = ChunkSizer(initial: 10_000_000, maximum: 128 << 20)
        #expect(odd.size % ChunkSizer.unit == 0)
        var fixed = ChunkSizer.fixed(8 << 20)
        #expect(fixed.record(bytes: 8 << 20, elapsed: .milliseconds(1)) == 8 << 20)
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
        // Near Int.max the rounding overflowed (a trap), and a stream reads ahead twice a chunk:
        // held at 5 TiB, Cloud Storage's largest object.
        parameters.chunkSize = .max
        #expect(parameters.effectiveChunkSize == 5 << 40)
        parameters.maximumChunkSize = .max
        parameters.adaptiveChunkSize = true
        _ = parameters.chunkSizer
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
