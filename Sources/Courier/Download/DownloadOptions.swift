import Foundation

/// How `ServiceActor.downloadFile(_:to:options:)` behaves.
public struct DownloadOptions: Sendable {
    /// Continue a partial download with `Range: bytes=N-`, validated by `If-Range` with its ETag;
    /// also how a download recovers from a dropped connection.
    public var resume = true
    /// Compare the file with the server's `x-goog-hash` (MD5 and CRC32C) when it sends one. A
    /// mismatch throws ``IntegrityError`` and leaves nothing under the file's name.
    public var verifyIntegrity = true
    /// Download large objects as concurrent `Range` slices (nil: always one stream).
    public var slicing: SlicedDownloads? = SlicedDownloads()
    /// Called as bytes arrive (from the downloading tasks).
    public var progress: (@Sendable (DownloadProgress) -> Void)?
    /// What reaches the file when the server sends the object compressed (`Content-Encoding:
    /// gzip`, as Cloud Storage does for an object stored with `contentEncoding: gzip`).
    public var contentDecoding = ContentDecoding.decoded

    /// Whether a compressed object is written decoded or as stored.
    ///
    /// Either way the download moves the stored bytes: it offers `Accept-Encoding: gzip` and
    /// decodes nothing on the way, so `x-goog-hash` (which covers the stored bytes) is checked
    /// against exactly the bytes it covers, and slices and resumptions count stored bytes.
    public enum ContentDecoding: Sendable, Hashable {
        /// The object's content, decoded once the stored bytes are whole and verified (gzip's own
        /// CRC is checked as it decodes). The default.
        case decoded
        /// The bytes as stored, still compressed.
        case stored
    }

    public init(resume: Bool = true, verifyIntegrity: Bool = true, slicing: SlicedDownloads? = SlicedDownloads(),
                contentDecoding: ContentDecoding = .decoded, progress: (@Sendable (DownloadProgress) -> Void)? = nil) {
        self.resume = resume
        self.verifyIntegrity = verifyIntegrity
        self.slicing = slicing
        self.contentDecoding = contentDecoding
        self.progress = progress
    }
}

/// When and how a download runs as concurrent `Range` requests into one file, as `gcloud
/// storage cp` does: each slice on its own connection, resumable on its own, the whole verified
/// by combining the slices' CRC32Cs (an MD5 cannot be combined, so a sliced download checks the
/// CRC32C alone).
///
/// Slicing starts only when the server's first answer shows an object of at least ``threshold``
/// bytes, `Accept-Ranges: bytes` and an `ETag`; every slice then asks `If-Match` that ETag, so an
/// object that changes midway fails (412) instead of mixing versions. That first answer is
/// dropped after its head: one round trip, small beside the object.
public struct SlicedDownloads: Sendable, Hashable {
    /// Objects at least this large are sliced: 128 MiB.
    public var threshold: Int64
    /// Slices at most: 4.
    public var maximumSlices: Int
    /// Slices at least this large: 32 MiB (so a 100 MiB object above a lowered threshold gets 3).
    public var minimumSliceSize: Int64

    public init(threshold: Int64 = 128 << 20, maximumSlices: Int = 4, minimumSliceSize: Int64 = 32 << 20) {
        self.threshold = threshold
        self.maximumSlices = maximumSlices
        self.minimumSliceSize = minimumSliceSize
    }

    /// The slices of an object of `total` bytes: near-equal ranges in order; nil for one stream.
    public func ranges(total: Int64) -> [Range<Int64>]? {
        guard total >= threshold, maximumSlices > 1 else { return nil }
        let count = Int(min(Int64(maximumSlices), max(1, total / max(1, minimumSliceSize))))
        guard count > 1 else { return nil }
        return ByteRanges.split(total, into: count)
    }
}

/// Bytes on disk so far, and the size when the server said.
public struct DownloadProgress: Sendable, Hashable {
    public var bytesWritten: Int64
    public var totalBytes: Int64?
}

/// A finished download.
public struct DownloadResult: Sendable {
    public let file: URL
    /// Bytes downloaded: the stored bytes, which for a compressed object decoded into the file
    /// (``DownloadOptions/ContentDecoding/decoded``) are fewer than the file's.
    public let bytes: Int64
    /// Bytes already on disk when this run started: 0 for a fresh download.
    public let resumedFrom: Int64
    /// Concurrent slices it ran as: 1 for one stream.
    public let slices: Int
    public let head: HTTPResponseHead
}

extension DownloadResult: CustomStringConvertible {
    /// The file, the bytes and the answer's head, without credentials (``HTTPResponseHead/description``).
    public var description: String { "DownloadResult(\(file.path), \(bytes) bytes in \(slices) slice(s), \(head))" }
}
