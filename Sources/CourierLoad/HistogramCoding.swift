import CZlib
import Foundation
import Histogram

/// The standard HdrHistogram interchange form: V2 encoding, zlib-compressed, base64 (`HISTFAAA…`).
///
/// It is what Java's `Histogram.encodeIntoCompressedByteBuffer`, Python's `hdrh` and the
/// HistogramLogAnalyzer read and write, so a result's latency histogram can leave Courier. Counts
/// are stored exactly; decoding records each count at its bucket's lowest value, which lands in the
/// same bucket, so a decoded histogram equals the original one (`==`).
enum HistogramCoding {
    // The V2 cookies, with 0x10 marking the ZigZag-LEB128 count encoding.
    static let encodingCookie: UInt32 = 0x1C84_9303 | 0x10
    static let compressedCookie: UInt32 = 0x1C84_9304 | 0x10
    static let headerSize = 40

    static func encode(_ histogram: Histogram<UInt64>) -> String {
        let layout = Layout(histogram.lowestDiscernibleValue, histogram.numberOfSignificantValueDigits)
        var payload = [UInt8]()
        var nextIndex = 0
        for value in histogram.recordedValues() {
            let index = layout.index(of: value.value)
            let zeros = index - nextIndex
            if zeros == 1 { ZigZag.append(0, to: &payload) } else if zeros > 1 { ZigZag.append(-Int64(zeros), to: &payload) }
            ZigZag.append(Int64(value.count), to: &payload)
            nextIndex = index + 1
        }
        var plain = [UInt8]()
        plain.reserveCapacity(headerSize + payload.count)
        plain.appendBigEndian(encodingCookie)
        plain.appendBigEndian(UInt32(payload.count))
        plain.appendBigEndian(UInt32(0)) // normalizing index offset
        plain.appendBigEndian(UInt32(histogram.numberOfSignificantValueDigits.rawValue))
        plain.appendBigEndian(histogram.lowestDiscernibleValue)
        plain.appendBigEndian(histogram.highestTrackableValue)
        plain.appendBigEndian(Double(1).bitPattern) // integer-to-double conversion ratio
        plain += payload

        let compressed = Deflate.compress(plain)
        var framed = [UInt8]()
        framed.appendBigEndian(compressedCookie)
        framed.appendBigEndian(UInt32(compressed.count))
        framed += compressed
        return Data(framed).base64EncodedString()
    }

    static func decode(_ text: String) throws -> Histogram<UInt64> {
        guard let data = Data(base64Encoded: text) else { throw LoadError.invalidResult("the histogram is not base64") }
        var reader = ByteReader(bytes: [UInt8](data))
        let cookie = try reader.uint32()
        let plain: [UInt8]
        switch cookie & ~0xF0 {
        case compressedCookie & ~0xF0:
            let length = Int(try reader.uint32())
            plain = try Deflate.decompress(try reader.bytes(length))
        case encodingCookie & ~0xF0:
            plain = [UInt8](data)
        default:
            throw LoadError.invalidResult("not an HdrHistogram V2 encoding (cookie \(String(cookie, radix: 16)))")
        }
        return try decodePlain(plain)
    }

    private static func decodePlain(_ bytes: [UInt8]) throws -> Histogram<UInt64> {
        var reader = ByteReader(bytes: bytes)
        guard try reader.uint32() & ~0xF0 == encodingCookie & ~0xF0 else {
            throw LoadError.invalidResult("the histogram's inner cookie is not V2")
        }
        let payloadLength = Int(try reader.uint32())
        guard try reader.uint32() == 0 else { throw LoadError.invalidResult("normalized histograms are not supported") }
        guard let digits = SignificantDigits(rawValue: Int8(truncatingIfNeeded: try reader.uint32())) else {
            throw LoadError.invalidResult("significant digits out of range")
        }
        let lowest = try reader.uint64()
        let highest = try reader.uint64()
        _ = try reader.uint64() // conversion ratio: only integer histograms here
        guard lowest >= 1, highest >= 2 * lowest, highest < UInt64.max / 2 else {
            throw LoadError.invalidResult("the histogram's value range \(lowest)...\(highest) is invalid")
        }
        var histogram = Histogram<UInt64>(lowestDiscernibleValue: lowest, highestTrackableValue: highest,
                                          numberOfSignificantValueDigits: digits)
        let layout = Layout(lowest, digits)
        var payload = ByteReader(bytes: try reader.bytes(payloadLength))
        var index = 0
        while !payload.isAtEnd {
            let count = try ZigZag.read(&payload)
            if count < 0 {
                // A run of empty buckets. The magnitude, not `-count`: Int64.min has no negation.
                let (next, overflow) = index.addingReportingOverflow(Int(clamping: count.magnitude))
                guard !overflow, next < 1 << 40 else { throw LoadError.invalidResult("the histogram skips past its buckets") }
                index = next
                continue
            }
            if count > 0 {
                let value = layout.value(at: index)
                guard value <= highest, histogram.record(value, count: UInt64(count)) else {
                    throw LoadError.invalidResult("a count lies beyond the histogram's range")
                }
            }
            index += 1
        }
        return histogram
    }
}

/// HdrHistogram's bucket arithmetic, which every implementation shares: index ↔ value.
private struct Layout {
    let unitMagnitude: Int
    let subBucketHalfCountMagnitude: Int
    let subBucketHalfCount: Int
    let subBucketMask: UInt64
    let leadingZeroCountBase: Int

    init(_ lowest: UInt64, _ digits: SignificantDigits) {
        var largestSingleUnit: UInt64 = 2
        for _ in 0..<Int(digits.rawValue) { largestSingleUnit *= 10 }
        let subBucketCountMagnitude = Int(Foundation.ceil(Foundation.log2(Double(largestSingleUnit))))
        subBucketHalfCountMagnitude = max(subBucketCountMagnitude, 1) - 1
        subBucketHalfCount = 1 << subBucketHalfCountMagnitude
        unitMagnitude = 63 - lowest.leadingZeroBitCount
        subBucketMask = (UInt64(1 << (subBucketHalfCountMagnitude + 1)) - 1) << unitMagnitude
        leadingZeroCountBase = 64 - unitMagnitude - subBucketHalfCountMagnitude - 1
    }

    func index(of value: UInt64) -> Int {
        let bucket = leadingZeroCountBase - (value | subBucketMask).leadingZeroBitCount
        let subBucket = Int(value >> (bucket + unitMagnitude))
        return ((bucket + 1) << subBucketHalfCountMagnitude) + (subBucket - subBucketHalfCount)
    }

    func value(at index: Int) -> UInt64 {
        var bucket = (index >> subBucketHalfCountMagnitude) - 1
        var subBucket = (index & (subBucketHalfCount - 1)) + subBucketHalfCount
        if bucket < 0 {
            subBucket -= subBucketHalfCount
            bucket = 0
        }
        return UInt64(subBucket) << (bucket + unitMagnitude)
    }
}

/// ZigZag LEB128 as HdrHistogram writes it: seven bits a byte, and a ninth byte holding eight.
enum ZigZag {
    static func append(_ value: Int64, to bytes: inout [UInt8]) {
        var rest = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        for _ in 0..<8 {
            if rest < 0x80 {
                bytes.append(UInt8(rest))
                return
            }
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    static func read(_ reader: inout ByteReader) throws -> Int64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        for position in 0..<9 {
            let byte = UInt64(try reader.byte())
            if position == 8 {
                result |= byte << 56
                break
            }
            result |= (byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        return Int64(bitPattern: result >> 1) ^ -Int64(bitPattern: result & 1)
    }
}

/// Big-endian reads over a byte array that fail, not trap, past the end.
struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw LoadError.invalidResult("the histogram is truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else { throw LoadError.invalidResult("the histogram is truncated") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func uint32() throws -> UInt32 {
        try bytes(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func uint64() throws -> UInt64 {
        try bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}

private extension [UInt8] {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}

/// zlib streams (with header and Adler-32), as `java.util.zip.Deflater` makes them.
enum Deflate {
    static func compress(_ input: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { compress2(out.baseAddress, &length, $0.baseAddress, uLong(input.count), Z_DEFAULT_COMPRESSION) }
        }
        precondition(status == Z_OK, "compress2 failed (\(status)) with a bound-sized buffer")
        return Array(output.prefix(Int(length)))
    }

    /// Inflates at most 64 MiB: a histogram is never that large, and a hostile file cannot make us try.
    static func decompress(_ input: [UInt8], limit: Int = 64 << 20) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw LoadError.invalidResult("zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output += chunk.prefix(chunk.count - Int(stream.avail_out))
                if status != Z_OK || output.count > limit { return status }
                if stream.avail_in == 0 && stream.avail_out != 0 { return Z_BUF_ERROR }
            }
        }
        guard status == Z_STREAM_END, output.count <= limit else {
            throw LoadError.invalidResult("the histogram's zlib stream is corrupt or truncated")
        }
        return output
    }
}
