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
        /// Bytes in memory.
        case data(Data)
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
    /// Bytes per chunk of a resumable upload; rounded up to a multiple of 256 KiB. 8 MiB by default.
    public var chunkSize: Int
    /// When the server forgot the session (404/410): start again from byte 0 (`true`, the default)
    /// or fail with ``UploadError/sessionExpired``.
    public var restartWhenSessionExpires: Bool
    /// Compare the server's MD5/CRC32C of the object with the bytes sent, when it reports them.
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

    init(source: Source, mimeType: String, uploadProtocol: UploadProtocol) {
        self.source = source
        self.mimeType = mimeType
        self.uploadProtocol = uploadProtocol
        chunkSize = 8 << 20
        restartWhenSessionExpires = true
        verifyIntegrity = true
        sessionFile = nil
    }

    /// The chunk size actually used: at least 256 KiB, a multiple of it.
    var effectiveChunkSize: Int64 {
        let unit: Int64 = 256 << 10
        return max(unit, (Int64(chunkSize) + unit - 1) / unit * unit)
    }

    /// The total size in bytes.
    func byteCount() throws(UploadError) -> Int64 {
        switch source {
        case .data(let data): return Int64(data.count)
        case .file(let url):
            var info = stat()
            guard stat(url.path, &info) == 0 else { throw UploadError(.fileChanged, message: "cannot stat \(url.path)") }
            return Int64(info.st_size)
        }
    }
}

/// Progress of an upload.
public struct UploadProgress: Sendable, Hashable {
    /// Bytes the server has acknowledged, plus those of the chunk being sent.
    public var bytesSent: Int64
    public var totalBytes: Int64

    public var fractionCompleted: Double { totalBytes == 0 ? 1 : Double(bytesSent) / Double(totalBytes) }
}
