/// One part of a run split across processes, as the pods of a Kubernetes Indexed Job.
///
/// The whole run's requests are numbered 0, 1, 2, … and dealt round-robin: shard `i` of `n` sends
/// the numbers `i`, `i + n`, `i + 2n`, …. So the shards together send exactly the requests one
/// process would have sent: the same count, the same scenario mix (each request's endpoint is
/// chosen by its number), and in the open model the same intended start times, interleaved.
public struct LoadShard: Codable, Sendable, Hashable, CustomStringConvertible {
    /// This shard's position, from 0.
    public let index: Int
    /// How many shards the run has.
    public let count: Int

    /// - Throws: ``LoadError/invalidArgument(_:)`` unless `0 <= index < count`.
    public init(index: Int, count: Int) throws {
        guard count >= 1 else { throw LoadError.invalidArgument("a run has at least one shard, not \(count)") }
        guard (0..<count).contains(index) else {
            throw LoadError.invalidArgument("shard \(index) is not one of 0...\(count - 1)")
        }
        self.index = index
        self.count = count
    }

    /// Reads `i/n`, as `--shard 3/20` gives it.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw LoadError.invalidArgument("\(text) is not a shard: expected i/n, as 0/4")
        }
        try self.init(index: index, count: count)
    }

    public var description: String { "\(index)/\(count)" }

    enum CodingKeys: String, CodingKey { case index, count }

    /// Checked as ``init(index:count:)`` checks: a result file's shard divides by its count.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(index: try container.decode(Int.self, forKey: .index), count: try container.decode(Int.self, forKey: .count))
    }

    /// This shard's part of `total` things dealt round-robin; the parts of all shards add up to `total`.
    public func share(of total: Int) -> Int {
        total / count + (index < total % count ? 1 : 0)
    }

    /// The whole run's number of this shard's `local`-th request.
    func globalNumber(_ local: Int) -> Int {
        index + local * count
    }
}
