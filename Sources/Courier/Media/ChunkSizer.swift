/// Chooses each resumable chunk's size from the throughput of the last one.
///
/// Every chunk costs a round trip and the server's acknowledgement, during which nothing is
/// sent; a chunk that takes about `target` to send keeps that cost small on a fast link
/// (loopback: 128 MiB chunks) and a failed chunk cheap to resend on a slow one (8 MiB). Sizes
/// are multiples of 256 KiB, as Google requires of every chunk but the last, within
/// `minimum...maximum`; growth is at most 4× a step so one fast chunk does not overshoot.
struct ChunkSizer: Sendable, Equatable {
    static let unit: Int64 = 256 << 10

    let minimum: Int64
    let maximum: Int64
    let target: Duration
    private(set) var size: Int64

    init(initial: Int64, maximum: Int64, target: Duration = .seconds(1)) {
        let initial = Self.rounded(initial)
        minimum = initial
        self.maximum = max(initial, Self.rounded(maximum))
        self.target = target
        size = initial
    }

    /// A fixed size: `record` changes nothing.
    static func fixed(_ size: Int64) -> ChunkSizer { ChunkSizer(initial: size, maximum: size) }

    /// The next size after sending `bytes` took `elapsed` (request start to acknowledgement).
    @discardableResult
    mutating func record(bytes: Int64, elapsed: Duration) -> Int64 {
        let seconds = elapsed.seconds
        // A short final chunk says little about the link.
        guard bytes >= size / 2, seconds > 0 else { return size }
        let ideal = Double(bytes) / seconds * target.seconds
        let bounded = min(ideal, Double(size) * 4)
        size = min(maximum, max(minimum, Self.rounded(Int64(min(bounded, Double(Int64.max / 2))))))
        return size
    }

    /// At least one unit, a multiple of it (rounded down above one unit).
    static func rounded(_ bytes: Int64) -> Int64 {
        max(unit, bytes / unit * unit)
    }
}
