import Foundation

/// zstd-coded bytes made without a compressor: one frame of raw blocks (RFC 8878 §3.1.1), which
/// any zstd decoder reads, libcurl's included. The raw fault server's `Content-Encoding: zstd`
/// bodies; no zstd package resolves here, and none is needed to frame bytes.
public enum Zstd {
    /// `data` as one frame of raw blocks of at most `blockSize` bytes (at most 128 KiB, the window).
    public static func rawFrame(_ data: Data, blockSize: Int = 4096) -> Data {
        precondition(blockSize > 0 && blockSize <= 128 << 10, "a raw block holds at most the window, 128 KiB")
        // The magic number 0xFD2FB528, little-endian; a frame header descriptor of nothing optional
        // (no content size, no checksum, no dictionary, not a single segment), so a window
        // descriptor follows: exponent 7, a window of 2^(10 + 7) bytes.
        var frame = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3])
        var start = data.startIndex
        repeat {
            let end = min(start + blockSize, data.endIndex)
            // Block header, 3 bytes little-endian: the size, type 0 (raw) and the last block's bit.
            let header = UInt32(truncatingIfNeeded: end - start) << 3 | (end == data.endIndex ? 1 : 0) // at most 128 KiB
            frame.append(contentsOf: [0, 8, 16].map { UInt8(truncatingIfNeeded: header >> $0) })
            frame.append(data[start..<end])
            start = end
        } while start < data.endIndex
        return frame
    }
}
