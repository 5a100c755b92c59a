import CCourierChecksum
import COpenSSL
import Foundation

/// MD5 (through libcrypto) and CRC32C of bytes fed in order: what Cloud Storage reports as
/// `md5Hash` and `crc32c`, to compare an upload or download against.
final class ChecksumAccumulator {
    private var md5: OpaquePointer?
    private(set) var crc32c: UInt32 = 0
    private(set) var count: Int64 = 0

    /// `md5: false` for CRC32C alone; `crc32c` continues a CRC of earlier bytes (a resumed stream).
    init(md5: Bool = true, crc32c: UInt32 = 0, count: Int64 = 0) {
        self.md5 = md5 ? courier_md5_new() : nil
        self.crc32c = crc32c
        self.count = count
    }

    deinit {
        if let md5 { courier_md5_free(md5) }
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if let md5 { courier_md5_update(md5, base, bytes.count) }
        crc32c = courier_crc32c_update(crc32c, base, bytes.count)
        count += Int64(bytes.count)
    }

    func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// How much is hashed between two looks at cancellation (and a file's read buffer).
    static let pieceSize = 1 << 20

    /// `data` in ``pieceSize`` pieces, stopping with `CancellationError` between them once the
    /// current task is cancelled (as ``file(_:range:into:)``).
    func update(cancellable data: Data) throws {
        try data.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                try Task.checkCancellation()
                let end = min(start + Self.pieceSize, bytes.count)
                update(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
        }
    }

    /// The digests; the accumulator cannot be fed afterwards.
    func finish() -> Checksums {
        var digest: Data?
        if let md5 {
            var bytes = [UInt8](repeating: 0, count: 16)
            courier_md5_finish(md5, &bytes)
            digest = Data(bytes)
            self.md5 = nil
        }
        return Checksums(md5: digest, crc32c: crc32c, byteCount: count)
    }

    /// Checksums of `range` of a file, read in 1 MiB pieces.
    /// Stops with `CancellationError` at the next piece once the current task is cancelled: a
    /// large file's hash otherwise outlived the upload or download it was for by seconds.
    static func file(_ url: URL, range: Range<Int64>, into accumulator: ChecksumAccumulator) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw UploadError(code: .fileChanged, message: "cannot open \(url.path)") }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: pieceSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = range.lowerBound
        while offset < range.upperBound {
            try Task.checkCancellation()
            let wanted = min(buffer.count, Int(range.upperBound - offset))
            let read = pread(descriptor, buffer.baseAddress, wanted, off_t(offset))
            guard read > 0 else { throw UploadError(code: .fileChanged, message: "\(url.path) is shorter than expected") }
            accumulator.update(UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
            offset += Int64(read)
        }
    }
}

/// MD5 and CRC32C of some bytes. MD5 is nil where it cannot be known: bytes hashed in pieces
/// (a sliced download, a composite upload), whose CRC32Cs combine but whose MD5s do not.
public struct Checksums: Sendable, Hashable, CustomStringConvertible {
    public let md5: Data?
    public let crc32c: UInt32
    public let byteCount: Int64

    public init(md5: Data?, crc32c: UInt32, byteCount: Int64) {
        self.md5 = md5
        self.crc32c = crc32c
        self.byteCount = byteCount
    }

    /// The checksums of pieces laid end to end, from each piece's own: the CRC32C combines,
    /// the MD5 is unknown (nil) unless there is one piece.
    public static func concatenating(_ pieces: [Checksums]) -> Checksums {
        guard pieces.count != 1 else { return pieces[0] }
        var crc: UInt32 = 0
        var count: Int64 = 0
        for piece in pieces {
            crc = courier_crc32c_combine(crc, piece.crc32c, UInt64(piece.byteCount))
            count += piece.byteCount
        }
        return Checksums(md5: nil, crc32c: crc, byteCount: count)
    }

    /// The checksums of bytes `range` of a file (all of it when nil), read in 1 MiB pieces;
    /// `md5: false` for the CRC32C alone (hardware-fast, and all a composite object has).
    /// Throws `CancellationError` once the current task is cancelled, within a piece.
    public static func of(file: URL, range: Range<Int64>? = nil, md5: Bool = true) throws -> Checksums {
        // A range starting before 0 is no file's; its distances would overflow below.
        if let range, range.lowerBound < 0 {
            throw UploadError(code: .invalidParameters, message: "bytes \(range) are outside \(file.path)")
        }
        let accumulator = ChecksumAccumulator(md5: md5)
        let whole = try range ?? 0..<UploadParameters.size(of: file)
        try ChecksumAccumulator.file(file, range: whole, into: accumulator)
        return accumulator.finish()
    }

    /// MD5 in base64, as Cloud Storage's `md5Hash`.
    public var md5Base64: String? { md5?.base64EncodedString() }
    /// MD5 in hex, as Drive's `md5Checksum`.
    public var md5Hex: String? { md5.map { $0.map { String(format: "%02x", $0) }.joined() } }
    /// CRC32C big-endian in base64, as Cloud Storage's `crc32c`.
    public var crc32cBase64: String {
        withUnsafeBytes(of: crc32c.bigEndian) { Data($0) }.base64EncodedString()
    }

    /// The `X-Goog-Hash` header value: `crc32c=…,md5=…` (base64).
    public var googHash: String {
        "crc32c=\(crc32cBase64)" + (md5Base64.map { ",md5=\($0)" } ?? "")
    }

    public var description: String { "md5 \(md5Base64 ?? "unknown"), crc32c \(crc32cBase64), \(byteCount) bytes" }

    /// Compares with what a server reported in an object's JSON (`md5Hash`, `md5Checksum`,
    /// `crc32c`); returns the first disagreement, or nil when all reported values match.
    func mismatch(with object: JSONObject) -> String? {
        if let reported = object["md5Hash"]?.stringValue, let local = md5Base64, reported != local {
            return "md5Hash: server \(reported), local \(local)"
        }
        if let reported = object["md5Checksum"]?.stringValue, let local = md5Hex, reported.lowercased() != local {
            return "md5Checksum: server \(reported), local \(local)"
        }
        if let reported = object["crc32c"]?.stringValue, reported != crc32cBase64 {
            return "crc32c: server \(reported), local \(crc32cBase64)"
        }
        return nil
    }

    /// Compares with an `X-Goog-Hash` header (`crc32c=…, md5=…`): the first disagreement, or nil.
    /// A value the header has but these checksums lack (an MD5 of pieces) is not compared.
    func mismatch(withGoogHash header: String) -> String? {
        for (name, reported) in Self.parseGoogHash(header) {
            let local: String? = switch name {
            case "md5": md5Base64
            case "crc32c": crc32cBase64
            default: nil
            }
            if let local, local != reported { return "\(name): server \(reported), local \(local)" }
        }
        return nil
    }

    /// `crc32c=AAAAAA==, md5=…` as name/value pairs (a base64 value may end in `=`).
    static func parseGoogHash(_ header: String) -> [(String, String)] {
        header.split(separator: ",").compactMap { entry in
            let pair = entry.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            return pair.count == 2 ? (pair[0].lowercased(), pair[1]) : nil
        }
    }
}
