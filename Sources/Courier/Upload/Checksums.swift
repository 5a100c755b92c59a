import CCourierChecksum
import COpenSSL
import Foundation

/// MD5 (through libcrypto) and CRC32C of bytes fed in order: what Cloud Storage reports as
/// `md5Hash` and `crc32c`, to compare an upload or download against.
final class ChecksumAccumulator {
    private var md5: OpaquePointer?
    private(set) var crc32c: UInt32 = 0
    private(set) var count: Int64 = 0

    init() {
        md5 = courier_md5_new()
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

    /// The digests; the accumulator cannot be fed afterwards.
    func finish() -> Checksums {
        var digest = [UInt8](repeating: 0, count: 16)
        if let md5 {
            courier_md5_finish(md5, &digest)
            self.md5 = nil
        }
        return Checksums(md5: Data(digest), crc32c: crc32c, byteCount: count)
    }

    /// Checksums of `range` of a file, read in 1 MiB pieces.
    static func file(_ url: URL, range: Range<Int64>, into accumulator: ChecksumAccumulator) throws(UploadError) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw UploadError(.fileChanged, message: "cannot open \(url.path)") }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let wanted = min(buffer.count, Int(range.upperBound - offset))
            let read = pread(descriptor, buffer.baseAddress, wanted, off_t(offset))
            guard read > 0 else { throw UploadError(.fileChanged, message: "\(url.path) is shorter than expected") }
            accumulator.update(UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
            offset += Int64(read)
        }
    }
}

/// MD5 and CRC32C of some bytes.
public struct Checksums: Sendable, Hashable, CustomStringConvertible {
    public let md5: Data
    public let crc32c: UInt32
    public let byteCount: Int64

    /// MD5 in base64, as Cloud Storage's `md5Hash`.
    public var md5Base64: String { md5.base64EncodedString() }
    /// MD5 in hex, as Drive's `md5Checksum`.
    public var md5Hex: String { md5.map { String(format: "%02x", $0) }.joined() }
    /// CRC32C big-endian in base64, as Cloud Storage's `crc32c`.
    public var crc32cBase64: String {
        withUnsafeBytes(of: crc32c.bigEndian) { Data($0) }.base64EncodedString()
    }

    public var description: String { "md5 \(md5Base64), crc32c \(crc32cBase64), \(byteCount) bytes" }

    /// Compares with what a server reported in an object's JSON (`md5Hash`, `md5Checksum`,
    /// `crc32c`); returns the first disagreement, or nil when all reported values match.
    func mismatch(with object: JSONObject) -> String? {
        if let reported = object["md5Hash"]?.stringValue, reported != md5Base64 {
            return "md5Hash: server \(reported), local \(md5Base64)"
        }
        if let reported = object["md5Checksum"]?.stringValue, reported.lowercased() != md5Hex {
            return "md5Checksum: server \(reported), local \(md5Hex)"
        }
        if let reported = object["crc32c"]?.stringValue, reported != crc32cBase64 {
            return "crc32c: server \(reported), local \(crc32cBase64)"
        }
        return nil
    }
}
