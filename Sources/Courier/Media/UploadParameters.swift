import Foundation

/// What to upload and how: GTLR's `GTLRUploadParameters`.
///
/// ```swift
/// var upload = UploadParameters(file: url, mimeType: "video/mp4")
/// upload.chunkSize = 16 << 20
/// upload.sessionFile = stateDirectory.appendingPathComponent("upload.json") // resume after a crash
/// query.upload = upload
/// let task = service.upload(query)
/// ```
public struct UploadParameters: Sendable {
    /// Where the bytes come from.
    public enum Source: Sendable {
        /// A file, streamed from disk: memory stays flat whatever its size.
        case file(URL)
        /// Bytes `range` of a file (a part of a parallel composite upload, say).
        case filePart(URL, Range<Int64>)
        /// Bytes in memory.
        case data(Data)
        /// Bytes of unknown length, read once (a pipe, a generated stream): resumable uploads only.
        case stream(UploadStream)
    }

    /// Google's upload protocols.
    public enum UploadProtocol: Sendable, Hashable {
        /// Chunks, each acknowledged; survives errors, pauses and restarts. The default.
        case resumable
        /// Metadata and media in one `multipart/related` request (GTLR's `shouldUploadWithSingleRequest`).
        case multipart
        /// The media alone in one request (no metadata).
        case media
    }

    public var source: Source
    public var mimeType: String
    public var uploadProtocol: UploadProtocol
    /// Bytes of the first chunk of a resumable upload; rounded up to a multiple of 256 KiB. 8 MiB by
    /// default. With ``adaptiveChunkSize`` the chunks after it grow with the measured throughput.
    public var chunkSize: Int
    /// Size each chunk from the last one's throughput (about a second of sending each, a
    /// multiple of 256 KiB, from ``chunkSize`` up to ``maximumChunkSize``), so the round trip
    /// between chunks costs little on a fast link. On by default; off, every chunk is ``chunkSize``.
    public var adaptiveChunkSize: Bool
    /// The largest chunk ``adaptiveChunkSize`` chooses: 128 MiB. A file's chunks are read from
    /// disk as they are sent, so their size costs no memory; a stream's are buffered (the chunk
    /// in flight and the next, read ahead), so its chunks stay at or below 16 MiB whatever this says.
    public var maximumChunkSize: Int
    /// When the server forgot the session (404/410): start again from byte 0 (`true`, the default)
    /// or fail with ``UploadError/sessionExpired``.
    public var restartWhenSessionExpires: Bool
    /// Send the media's MD5 and CRC32C with the request that completes the upload
    /// (`X-Goog-Hash`), so Cloud Storage refuses bytes corrupted on the way, and compare the
    /// object's `md5Hash`/`crc32c` (or Drive's `md5Checksum`) with them. A disagreement, on
    /// either side, is an ``IntegrityError``. On by default.
    public var verifyIntegrity: Bool
    /// If set, the resumable session is written here (JSON, mode 0600) after every acknowledged
    /// chunk, so ``ServiceActor/resumeUpload(from:query:)`` can continue it in a new process.
    public var sessionFile: URL?

    public init(file: URL, mimeType: String, uploadProtocol: UploadProtocol = .resumable) {
        self.init(source: .file(file), mimeType: mimeType, uploadProtocol: uploadProtocol)
    }

    public init(data: Data, mimeType: String, uploadProtocol: UploadProtocol = .resumable) {
        self.init(source: .data(data), mimeType: mimeType, uploadProtocol: uploadProtocol)
    }

    /// Bytes `range` of a file (a part of a parallel composite upload, say).
    public init(file: URL, range: Range<Int64>, mimeType: String, uploadProtocol: UploadProtocol = .resumable) {
        self.init(source: .filePart(file, range), mimeType: mimeType, uploadProtocol: uploadProtocol)
    }

    /// Bytes of unknown length, sent as a resumable upload whose last chunk names the total.
    public init(stream: UploadStream, mimeType: String) {
        self.init(source: .stream(stream), mimeType: mimeType, uploadProtocol: .resumable)
    }

    init(source: Source, mimeType: String, uploadProtocol: UploadProtocol) {
        self.source = source
        self.mimeType = mimeType
        self.uploadProtocol = uploadProtocol
        chunkSize = 8 << 20
        adaptiveChunkSize = true
        maximumChunkSize = 128 << 20
        restartWhenSessionExpires = true
        verifyIntegrity = true
        sessionFile = nil
    }

    /// The chunk size actually used: at least 256 KiB, a multiple of it.
    var effectiveChunkSize: Int64 {
        let unit: Int64 = 256 << 10
        // At most 5 TiB, Cloud Storage's largest object: a chunk size near Int.max would
        // overflow the rounding here and the stream's read-ahead (twice a chunk) later.
        let asked = min(Int64(chunkSize), Self.largestChunkSize)
        return max(unit, (asked + unit - 1) / unit * unit)
    }

    /// The chunk sizes a resumable upload of this source uses.
    var chunkSizer: ChunkSizer {
        guard adaptiveChunkSize else { return .fixed(effectiveChunkSize) }
        var maximum = min(Int64(maximumChunkSize), Self.largestChunkSize)
        if case .stream = source { maximum = min(maximum, Self.maximumStreamChunkSize) }
        return ChunkSizer(initial: min(effectiveChunkSize, max(maximum, ChunkSizer.unit)), maximum: maximum)
    }

    /// A stream's chunks are held in memory twice over (in flight and read ahead).
    static let maximumStreamChunkSize: Int64 = 16 << 20

    /// The largest chunk a request carries: 5 TiB, the largest object Cloud Storage keeps.
    static let largestChunkSize: Int64 = 5 << 40

    /// The total size in bytes; nil for a stream.
    func byteCount() throws(UploadError) -> Int64? {
        switch source {
        case .data(let data): return Int64(data.count)
        case .file(let url): return try Self.size(of: url)
        case .filePart(let url, let range):
            let size = try Self.size(of: url)
            guard range.lowerBound >= 0, range.upperBound <= size else {
                throw UploadError(code: .invalidParameters, message: "bytes \(range) are outside \(url.path) (\(size) bytes)")
            }
            return Int64(range.count)
        case .stream: return nil
        }
    }

    static func size(of url: URL) throws(UploadError) -> Int64 {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw UploadError(code: .fileChanged, message: "cannot stat \(url.path)") }
        return Int64(info.st_size)
    }

    /// The file and where the uploaded bytes start in it, for file sources.
    var file: (url: URL, base: Int64)? {
        switch source {
        case .file(let url): (url, 0)
        case .filePart(let url, let range): (url, range.lowerBound)
        case .data, .stream: nil
        }
    }

    /// Bytes `range` of a file or data source as a part of a larger body.
    func part(_ range: Range<Int64>) -> HTTPRequest.Body.Part {
        switch source {
        case .file(let url): .file(url, range: range)
        case .filePart(let url, let part): .file(url, range: (part.lowerBound + range.lowerBound)..<(part.lowerBound + range.upperBound))
        case .data(let data): .data(data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound)))
        case .stream: preconditionFailure("a stream's chunks come from its buffer")
        }
    }

    /// The body of bytes `range` of a file or data source (a stream's come from its buffer).
    func body(_ range: Range<Int64>) -> HTTPRequest.Body {
        if range.isEmpty { return .empty }
        return switch part(range) {
        case .file(let url, let range): range.map { .file(url, range: $0) } ?? .file(url)
        case .data(let data): .data(data)
        }
    }
}

/// Progress of an upload.
public struct UploadProgress: Sendable, Hashable {
    /// Bytes the server has acknowledged, plus those of the chunk being sent.
    public var bytesSent: Int64
    /// Nil while a stream's length is unknown.
    public var totalBytes: Int64?

    /// Nil while the total is unknown.
    public var fractionCompleted: Double? {
        totalBytes.map { $0 == 0 ? 1 : Double(bytesSent) / Double($0) }
    }
}
