import CZlib
import Foundation

/// Decodes a gzip file into another, a megabyte at a time, with zlib: the end of a download of a
/// gzip-stored object. zlib checks gzip's own CRC-32 and length as it goes.
enum GzipDecoder {
    static func decode(_ source: URL, to destination: URL) throws {
        guard let input = FileHandle(forReadingAtPath: source.path) else {
            throw TransportError(.fileError, message: "cannot read \(source.path)")
        }
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: destination.path, contents: nil),
              let output = FileHandle(forWritingAtPath: destination.path) else {
            throw TransportError(.fileError, message: "cannot write \(destination.path)")
        }
        defer { try? output.close() }
        var stream = z_stream()
        // 16 + 15: a gzip wrapper, the largest window.
        guard inflateInit2_(&stream, 16 + 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw TransportError(.unknown, message: "zlib did not start")
        }
        defer { inflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: 1 << 20)
        var status = Z_OK
        while status != Z_STREAM_END {
            guard let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty else {
                throw TransportError(.protocolError, message: "the gzip data ended before its end (\(stream.total_in) bytes read)")
            }
            try chunk.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                stream.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(truncatingIfNeeded: raw.count) // a read of at most 1 MiB
                repeat {
                    let produced = out.withUnsafeMutableBufferPointer { buffer -> Int in
                        stream.next_out = buffer.baseAddress
                        stream.avail_out = uInt(truncatingIfNeeded: buffer.count) // 1 MiB
                        status = inflate(&stream, Z_NO_FLUSH)
                        return buffer.count - Int(stream.avail_out)
                    }
                    guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && produced == 0) else {
                        throw TransportError(.protocolError, message: "the stored bytes are not valid gzip (zlib \(status) after \(stream.total_in) bytes)")
                    }
                    if produced > 0 { try output.write(contentsOf: out[0..<produced]) }
                } while stream.avail_out == 0 && status != Z_STREAM_END
            }
        }
    }
}
