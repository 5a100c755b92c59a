import CZlib
import Foundation

/// gzip in memory, for the testbench's compressed objects: what a client stores with
/// `contentEncoding: gzip`, and the decompressive transcoding Cloud Storage applies for a
/// client that does not accept gzip.
public enum Gzip {
    /// `data` compressed into one gzip member (`windowBits` 16 + 15); 15 makes zlib's wrapper
    /// (HTTP's `deflate`), -15 raw deflate.
    public static func compress(_ data: Data, windowBits: Int32 = 16 + 15) -> Data {
        // zlib counts a buffer in 32 bits: more than that in one call is refused, not narrowed.
        guard uInt(exactly: data.count) != nil else { return Data() }
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return Data() }
        defer { deflateEnd(&stream) }
        var output = Data(count: Int(deflateBound(&stream, uLong(data.count))) + 64)
        guard let outputSize = uInt(exactly: output.count) else { return Data() }
        let count = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int in
            output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Int in
                stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(truncatingIfNeeded: input.count) // checked above
                stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = outputSize
                return deflate(&stream, Z_FINISH) == Z_STREAM_END ? out.count - Int(stream.avail_out) : 0
            }
        }
        return output.prefix(count)
    }

    /// Every member of `data` decoded, or nil when it is not whole gzip.
    public static func decompress(_ data: Data) -> Data? {
        guard let inputSize = uInt(exactly: data.count) else { return nil }
        var stream = z_stream()
        guard inflateInit2_(&stream, 16 + 15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var status = Z_OK
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = inputSize
            repeat {
                let produced = buffer.withUnsafeMutableBufferPointer { out -> Int in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(truncatingIfNeeded: out.count) // 64 KiB
                    status = inflate(&stream, Z_NO_FLUSH)
                    return out.count - Int(stream.avail_out)
                }
                result.append(contentsOf: buffer[0..<produced])
                // Another member may follow (RFC 1952 §2.2: several members are one file, as
                // composing gzip parts makes); bytes after the last one that start none are ignored.
                if status == Z_STREAM_END, stream.avail_in > 0, stream.next_in.pointee == 0x1F {
                    inflateReset(&stream)
                    status = Z_OK
                }
            } while status == Z_OK
        }
        return status == Z_STREAM_END ? result : nil
    }
}
