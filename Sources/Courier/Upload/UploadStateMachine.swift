import Foundation

/// Google's resumable upload protocol as a pure value: server answers in, the next request out.
///
/// - Initiation: a POST that returns the session URI.
/// - Chunks: `PUT` with `Content-Range: bytes a-b/total`; a 308 with `Range: bytes=0-N` means
///   "continue at N+1" (the server may keep fewer bytes than were sent); 200/201 ends it.
/// - Unknown size (a stream): chunks say `bytes a-b/*` until the source ends; the chunk that
///   ends it names the total. Whether a chunk is the last is known before it is sent, by
///   reading one byte past it (``Action/readSource(through:)``), so even a source that ends on a
///   chunk boundary needs no empty `bytes */total` request to finish.
/// - Status query: after any failure (and in a new process) the offset is unknown, so a
///   `PUT` with `Content-Range: bytes */total` asks the server where to continue.
/// - 404/410: the session is gone: start again from byte 0, or fail, as configured.
/// - A 200/201 whose body is not the object (cut short on the way): the object exists, so a
///   status query, which writes nothing, reads its resource again.
///
/// Pausing takes effect between requests: a chunk in flight finishes, so the offset is known
/// when the upload resumes and no status query is needed.
struct UploadStateMachine: Sendable {
    enum Phase: Sendable, Equatable {
        case idle, initiating, reading, sending(Range<Int64>), querying, waitingToRetry, paused, finished, failed
    }

    enum Action: Sendable, Equatable {
        case initiate
        /// A source of unknown size: read it up to byte `through` (exclusive) or its end, then
        /// call ``sourceRead(available:ended:)``.
        case readSource(through: Int64)
        /// Send bytes `range`; `Content-Range: bytes lower-(upper-1)/total`.
        case sendChunk(Range<Int64>)
        case queryStatus
        /// Nothing to send until ``resume()``.
        case pause
        /// The shell waits as its retry policy says, then calls ``retryAfterBackoff()``.
        case backOff
        /// The server completed the upload; the shell reads the final object.
        case finish
        case fail(UploadError)
    }

    /// The most times a vanished session is restarted from zero before giving up.
    static let maxRestarts = 3
    /// The most chunks in a row whose 308 takes the server past no byte it held before. A server
    /// that keeps nothing it is sent (a 308 with no `Range`, again and again) would otherwise be
    /// sent the same chunk forever; gsutil gives up on such an upload the same way, after its
    /// retry count of attempts without progress.
    static let maxChunksWithoutProgress = 5
    /// The most status queries sent to read an object whose final answer was unreadable.
    static let maxUnreadableAnswers = 3

    /// Nil until a source of unknown size ends.
    private(set) var total: Int64?
    /// The next chunk's size; an adaptive sizer may change it between chunks.
    private(set) var chunkSize: Int64
    let restartWhenSessionExpires: Bool
    /// Whether the source can be read again from byte 0 (a file or data, not a stream), so a
    /// vanished session can start over.
    var rewindable = true
    /// Bytes of a source of unknown size known to exist (read so far).
    private(set) var available: Int64 = 0
    private(set) var phase = Phase.idle
    private(set) var sessionURI: URL?
    /// Bytes the server acknowledged.
    private(set) var offset: Int64 = 0
    private(set) var offsetKnown = true
    private(set) var pauseRequested = false
    private(set) var restarts = 0
    /// The most bytes the server acknowledged in this session, and the chunks answered since
    /// that took it no further.
    private var mostAcknowledged: Int64 = 0
    private(set) var chunksWithoutProgress = 0
    private(set) var unreadableAnswers = 0

    init(total: Int64?, chunkSize: Int64, restartWhenSessionExpires: Bool) {
        self.total = total
        self.chunkSize = max(1, chunkSize)
        self.restartWhenSessionExpires = restartWhenSessionExpires
    }

    /// Continues a session from another process: where the server is must be asked first.
    init(resuming sessionURI: URL, offset: Int64, total: Int64?, chunkSize: Int64, restartWhenSessionExpires: Bool) {
        self.init(total: total, chunkSize: chunkSize, restartWhenSessionExpires: restartWhenSessionExpires)
        self.sessionURI = sessionURI
        self.offset = offset
        offsetKnown = false
    }

    mutating func start() -> Action {
        guard phase == .idle else { return .fail(UploadError(code: .protocolViolation, message: "the upload already started")) }
        if pauseRequested {
            phase = .paused
            return .pause
        }
        return proceed()
    }

    /// The next request from where things stand.
    private mutating func proceed() -> Action {
        guard sessionURI != nil else {
            phase = .initiating
            return .initiate
        }
        guard offsetKnown else {
            phase = .querying
            return .queryStatus
        }
        guard let total else {
            // Whether the next chunk is the last: known once a byte past it exists, or the source ended.
            guard available > offset + chunkSize else {
                phase = .reading
                return .readSource(through: offset + chunkSize + 1)
            }
            phase = .sending(offset..<offset + chunkSize)
            return .sendChunk(offset..<offset + chunkSize)
        }
        if offset >= total && total > 0 {
            // The server has every byte but did not say "done": a status query finalizes or reports.
            phase = .querying
            return .queryStatus
        }
        let end = min(offset + chunkSize, total)
        phase = .sending(offset..<end)
        return .sendChunk(offset..<end)
    }

    /// What ``Action/readSource(through:)`` found: `available` bytes exist; `ended` if that is all.
    mutating func sourceRead(available: Int64, ended: Bool) -> Action {
        guard phase == .reading else { return unexpected("a source read") }
        self.available = max(self.available, available)
        if ended {
            guard available >= offset else {
                phase = .failed
                return .fail(UploadError(code: .protocolViolation, message: "the source ended at \(available) bytes, before the \(offset) the server holds"))
            }
            total = available
        } else if available <= offset + chunkSize {
            phase = .failed
            return .fail(UploadError(code: .protocolViolation, message: "the source read stopped before its end"))
        }
        return proceed()
    }

    /// The size of the chunks after the one in flight (a multiple of 256 KiB, from ``ChunkSizer``).
    mutating func setChunkSize(_ size: Int64) {
        chunkSize = max(1, size)
    }

    /// The initiation returned `Location`.
    mutating func initiated(sessionURI: URL) -> Action {
        guard phase == .initiating else { return unexpected("a session URI") }
        self.sessionURI = sessionURI
        offset = 0
        offsetKnown = true
        return afterAcknowledgement()
    }

    /// A 308: the server holds bytes `0...lastByte` (`nil`: none yet).
    mutating func incomplete(lastByte: Int64?) -> Action {
        switch phase {
        case .sending, .querying: break
        default: return unexpected("a 308")
        }
        // `Range: bytes=0-9223372036854775807` is a server's to send: its next byte overflows.
        let (next, overflow) = (lastByte ?? -1).addingReportingOverflow(1)
        guard !overflow, next >= 0, next <= total ?? .max else {
            phase = .failed
            return .fail(UploadError(code: .protocolViolation, message: "the server acknowledged bytes up to \(lastByte.map(String.init) ?? "none") of \(total ?? 0)"))
        }
        if case .sending(let range) = phase, next > range.upperBound {
            phase = .failed
            return .fail(UploadError(code: .protocolViolation, message: "the server acknowledged bytes it was never sent"))
        }
        if next > mostAcknowledged {
            mostAcknowledged = next
            chunksWithoutProgress = 0
        } else if case .sending = phase {
            chunksWithoutProgress += 1
            guard chunksWithoutProgress < Self.maxChunksWithoutProgress else {
                phase = .failed
                return .fail(UploadError(code: .protocolViolation,
                                         message: "the server kept none of \(chunksWithoutProgress) chunks in a row (it holds \(next) bytes)"))
            }
        }
        offset = next
        offsetKnown = true
        return afterAcknowledgement()
    }

    private mutating func afterAcknowledgement() -> Action {
        if pauseRequested {
            phase = .paused
            return .pause
        }
        return proceed()
    }

    /// A 200 or 201: the object exists.
    mutating func completed() -> Action {
        if let early = completedEarly() { return early }
        switch phase {
        case .sending, .querying:
            phase = .finished
            if let total { offset = total }
            return .finish
        default:
            return unexpected("a final response")
        }
    }

    /// A 200 or 201 whose body is not the object (cut short, or not JSON): the server holds the
    /// object, and a status query reads it again. After ``maxUnreadableAnswers`` such answers
    /// in a row the upload finishes with the last, and decoding it reports why.
    mutating func completedUnreadably() -> Action {
        if let early = completedEarly() { return early }
        switch phase {
        case .sending, .querying: break
        default: return unexpected("a final response")
        }
        unreadableAnswers += 1
        guard unreadableAnswers <= Self.maxUnreadableAnswers else { return completed() }
        if let total { offset = total }
        offsetKnown = false
        return afterAcknowledgement()
    }

    /// A 200 or 201 to a chunk that does not end the upload: the session was completed by
    /// someone else, with bytes this upload has not sent (java-storage's scenario S.1), so the
    /// object is not this source. A status query or the last chunk may complete it.
    private mutating func completedEarly() -> Action? {
        guard case .sending(let range) = phase, !isFinal(range) else { return nil }
        phase = .failed
        return .fail(UploadError(code: .protocolViolation, message: "the server completed the upload when sent bytes "
            + "\(range.lowerBound)-\(range.upperBound - 1) of \(total.map(String.init) ?? "an unknown total"), which do not end it"))
    }

    /// The request failed. `sessionGone` for a 404 or 410 on the session URI.
    mutating func failed(sessionGone: Bool) -> Action {
        if sessionGone {
            guard restartWhenSessionExpires else {
                phase = .failed
                return .fail(UploadError(code: .sessionExpired, message: "the server no longer knows the upload session"))
            }
            guard rewindable || offset == 0 else {
                phase = .failed
                return .fail(UploadError(code: .sessionExpired, message: "the upload session vanished after \(offset) bytes of a stream, which cannot be read again"))
            }
            guard restarts < Self.maxRestarts else {
                phase = .failed
                return .fail(UploadError(code: .sessionExpired, message: "the upload session vanished \(restarts + 1) times"))
            }
            restarts += 1
            sessionURI = nil
            offset = 0
            mostAcknowledged = 0
            chunksWithoutProgress = 0
            offsetKnown = true
            return afterAcknowledgement()
        }
        // What reached the server is unknown now: ask before sending more.
        offsetKnown = sessionURI == nil
        phase = .waitingToRetry
        return .backOff
    }

    mutating func retryAfterBackoff() -> Action {
        guard phase == .waitingToRetry else { return unexpected("a retry") }
        return afterAcknowledgement()
    }

    /// Asks to pause; returns `.pause` at once if nothing is in flight, nil otherwise (the
    /// request in flight finishes first).
    mutating func pause() -> Action? {
        pauseRequested = true
        switch phase {
        case .waitingToRetry:
            phase = .paused
            return .pause
        default:
            return nil
        }
    }

    /// Continues after a pause.
    mutating func resume() -> Action? {
        pauseRequested = false
        guard phase == .paused else { return nil }
        return proceed()
    }

    var isFinished: Bool { phase == .finished }

    private mutating func unexpected(_ what: String) -> Action {
        phase = .failed
        return .fail(UploadError(code: .protocolViolation, message: "\(what) arrived in phase \(phase)"))
    }

    /// `Content-Range` of a chunk: `bytes a-b/total`, `bytes a-b/*` while the size is unknown,
    /// or `bytes */total` for an empty upload (and for a status query).
    static func contentRange(_ range: Range<Int64>, total: Int64?) -> String {
        let size = total.map(String.init) ?? "*"
        return range.isEmpty ? "bytes */\(size)" : "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
    }

    /// Whether a request with this range can complete the upload, so it carries `X-Goog-Hash`.
    func isFinal(_ range: Range<Int64>) -> Bool {
        total.map { range.upperBound == $0 } ?? false
    }

    /// The last byte a 308's `Range: bytes=0-N` acknowledges; nil when it has no Range (nothing yet).
    static func lastAcknowledgedByte(fromRange header: String?) -> Int64?? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return .some(nil) }
        guard header.hasPrefix("bytes=0-"), let last = Int64(header.dropFirst("bytes=0-".count)) else { return nil }
        return .some(last)
    }
}
