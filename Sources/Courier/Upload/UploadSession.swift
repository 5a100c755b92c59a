import COpenSSL
import Foundation

/// Everything needed to continue a resumable upload in a new process: GTLR's missing piece.
///
/// Save it (``UploadParameters/sessionFile`` does, after every acknowledged chunk), and after a
/// crash call ``ServiceActor/resumeUpload(_:query:)``. The file is identified by path, size,
/// modification date and a digest of its first MiB, so a file changed in between is refused
/// (``UploadError/fileChanged``) rather than uploaded half old, half new. A stream has no
/// identity to check: the query given to resume must carry a stream that starts at ``offset``.
public struct UploadSession: Codable, Sendable, Hashable {
    /// The session URI the server returned in `Location`.
    public var sessionURI: URL
    /// Bytes the server acknowledged (its last 308's range end + 1).
    public var offset: Int64
    /// Nil for a stream whose end has not been read yet.
    public var totalBytes: Int64?
    public var chunkSize: Int64
    public var mimeType: String
    /// The file uploaded; nil for a stream.
    public var file: FileIdentity?
    /// The CRC32C of a stream's first ``offset`` bytes, so that a resumed stream's checksum
    /// still covers the whole object (its MD5 cannot be continued and is not sent).
    public var acknowledgedCRC32C: UInt32?
    /// The query's method name, for logs.
    public var queryName: String
    public var verifyIntegrity: Bool

    public init(sessionURI: URL, offset: Int64, totalBytes: Int64?, chunkSize: Int64, mimeType: String, file: FileIdentity?,
                queryName: String, verifyIntegrity: Bool, acknowledgedCRC32C: UInt32? = nil) {
        self.sessionURI = sessionURI
        self.offset = offset
        self.totalBytes = totalBytes
        self.chunkSize = chunkSize
        self.mimeType = mimeType
        self.file = file
        self.queryName = queryName
        self.verifyIntegrity = verifyIntegrity
        self.acknowledgedCRC32C = acknowledgedCRC32C
    }

    public struct FileIdentity: Codable, Sendable, Hashable {
        public var path: String
        public var size: Int64
        /// The file's modification time in nanoseconds since 1970, exact (a date in JSON would
        /// lose the fraction and make every file look changed); a time past what 64 bits of
        /// nanoseconds hold (before 1678, after 2262) is held at their end.
        public var modifiedNanoseconds: Int64
        /// SHA-256 of the first MiB, hex.
        public var headDigest: String

        public var modificationDate: Date { Date(timeIntervalSince1970: Double(modifiedNanoseconds) / 1e9) }

        /// Reads the identity of `url` now.
        public init(of url: URL) throws(UploadError) {
            var info = stat()
            guard stat(url.path, &info) == 0 else { throw UploadError(code: .fileChanged, message: "cannot stat \(url.path)") }
            path = url.path
            size = Int64(info.st_size)
            modifiedNanoseconds = Self.nanoseconds(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int64(info.st_mtim.tv_nsec))
            headDigest = try Self.digestOfHead(url)
        }

        /// A file's time in nanoseconds, held at Int64's ends: any process can set a file's
        /// time to the year 3000 (`touch -d`), and the product overflowed, stopping the process.
        static func nanoseconds(seconds: Int64, nanoseconds: Int64) -> Int64 {
            let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            guard !overflow else { return seconds < 0 ? .min : .max }
            let (sum, carry) = product.addingReportingOverflow(nanoseconds)
            return carry ? .max : sum
        }

        static func digestOfHead(_ url: URL) throws(UploadError) -> String {
            guard let handle = FileHandle(forReadingAtPath: url.path) else {
                throw UploadError(code: .fileChanged, message: "cannot read \(url.path)")
            }
            defer { try? handle.close() }
            let head = (try? handle.read(upToCount: 1 << 20)) ?? Data()
            var digest = [UInt8](repeating: 0, count: 32)
            head.withUnsafeBytes { _ = courier_sha256($0.baseAddress, $0.count, &digest) }
            return digest.map { String(format: "%02x", $0) }.joined()
        }
    }

    /// Writes the session as JSON, mode 0600, atomically.
    public func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let temporary = url.appendingPathExtension("tmp")
        try encoder.encode(self).write(to: temporary)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: temporary.path)
        // rename(2) replaces atomically, and works when the destination does not exist yet
        // (FileManager.replaceItemAt does not, on Linux).
        guard rename(temporary.path, url.path) == 0 else {
            throw UploadError(code: .invalidParameters, message: "cannot write the session file \(url.path)")
        }
    }

    /// Reads a session written by ``write(to:)``.
    public init(contentsOf url: URL) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        self = try decoder.decode(UploadSession.self, from: Data(contentsOf: url))
    }
}

extension UploadSession: CustomStringConvertible {
    /// The query, the progress and the session's host: the session URI is a secret (it alone
    /// lets anyone upload into the session), so none of its path or query shows.
    public var description: String {
        "UploadSession(\(queryName), \(offset) of \(totalBytes.map(String.init) ?? "?") bytes, session at \(sessionURI.host ?? "?") \(Redaction.placeholder))"
    }
}
