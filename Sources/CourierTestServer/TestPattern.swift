import CCourierTestSupport

/// The deterministic bytes the test server sends for `/bytes/N` and friends, and the hash it
/// reports for bodies it receives, so a client can check every byte without holding them.
public enum TestPattern {
    /// Byte `index` of every generated body.
    @inline(__always) public static func byte(at index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index % 251) }

    /// Fills `buffer` with the bytes that start at `offset`.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int) {
        guard let base = buffer.baseAddress else { return }
        courier_pattern_fill(base.assumingMemoryBound(to: UInt8.self), buffer.count, UInt64(offset))
    }

    /// `count` pattern bytes starting at `offset`.
    public static func bytes(count: Int, offset: Int = 0) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer), offset: offset)
            initialized = count
        }
    }

    /// FNV-1a, 64 bit: cheap, streaming, good enough to catch a lost or swapped byte.
    public struct Hasher: Sendable {
        public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
        public private(set) var count = 0

        public init() {}

        public mutating func update(_ bytes: some Sequence<UInt8>) {
            let done: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
                if let base = buffer.baseAddress { value = courier_fnv1a(value, base, buffer.count) }
                count += buffer.count
                return true
            }
            if done == nil {
                for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3; count += 1 }
            }
        }

        public var hex: String { String(value, radix: 16) }
    }
}
