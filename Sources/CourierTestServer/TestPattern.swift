/// The deterministic bytes the test server sends for `/bytes/N` and friends, and the hash it
/// reports for bodies it receives, so a client can check every byte without holding them.
public enum TestPattern {
    /// Byte `index` of every generated body.
    @inline(__always) public static func byte(at index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index % 251) }

    /// Fills `buffer` with the bytes that start at `offset`.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int) {
        for index in 0..<buffer.count { buffer[index] = byte(at: offset + index) }
    }

    /// `count` pattern bytes starting at `offset`.
    public static func bytes(count: Int, offset: Int = 0) -> [UInt8] {
        (0..<count).map { byte(at: offset + $0) }
    }

    /// FNV-1a, 64 bit: cheap, streaming, good enough to catch a lost or swapped byte.
    public struct Hasher: Sendable {
        public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
        public private(set) var count = 0

        public init() {}

        public mutating func update(_ bytes: some Sequence<UInt8>) {
            var hash = value
            var added = 0
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
                added += 1
            }
            value = hash
            count += added
        }

        public var hex: String { String(value, radix: 16) }
    }
}
