import Foundation
import Histogram

/// Latencies in microseconds, in an HDR histogram (three significant digits, up to one hour).
///
/// In JSON it carries a readable summary for people and tools like `jq`, and the histogram itself
/// in the standard compressed HdrHistogram encoding (`hdr`), which is all that decoding reads.
public struct LatencyDistribution: Codable, Sendable, Equatable {
    /// The percentiles reports show.
    public static let reportedPercentiles: [Double] = [50, 75, 90, 99, 99.9, 99.99]
    static let highestTrackable: UInt64 = 3_600_000_000

    public private(set) var histogram: Histogram<UInt64>

    public init() {
        histogram = Histogram(lowestDiscernibleValue: 1, highestTrackableValue: Self.highestTrackable,
                              numberOfSignificantValueDigits: .three)
    }

    /// A coarser histogram, for figures kept per second (a ``LoadTimeline``): two digits take a
    /// seventh of the memory of three.
    init(significantDigits: SignificantDigits) {
        histogram = Histogram(lowestDiscernibleValue: 1, highestTrackableValue: Self.highestTrackable,
                              numberOfSignificantValueDigits: significantDigits)
    }

    public init(histogram: Histogram<UInt64>) {
        self.histogram = histogram
    }

    /// Records one latency; anything past an hour counts as an hour.
    public mutating func record(microseconds: UInt64) {
        _ = histogram.record(Swift.min(Swift.max(microseconds, 1), 3_600_000_000))
    }

    /// Adds every count of `other`.
    public mutating func add(_ other: LatencyDistribution) {
        histogram.add(other.histogram)
    }

    public var count: Int { Int(histogram.totalCount) }
    /// In microseconds, like every figure here.
    public var mean: Double { histogram.mean }
    public var standardDeviation: Double { histogram.stdDeviation }
    public var min: UInt64 { histogram.totalCount == 0 ? 0 : histogram.min }
    public var max: UInt64 { histogram.max }

    /// The latency at or below which `percentile` percent of requests finished, in microseconds.
    public func value(atPercentile percentile: Double) -> UInt64 {
        histogram.totalCount == 0 ? 0 : histogram.valueAtPercentile(percentile)
    }

    enum CodingKeys: String, CodingKey {
        case unit, count, min, mean, stdev, max, percentiles, hdr
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        histogram = try HistogramCoding.decode(try container.decode(String.self, forKey: .hdr))
        if let count = try container.decodeIfPresent(Int.self, forKey: .count), count != self.count {
            throw LoadError.invalidResult("the latency count \(count) disagrees with its histogram's \(self.count)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("us", forKey: .unit)
        try container.encode(count, forKey: .count)
        try container.encode(min, forKey: .min)
        try container.encode((mean * 10).rounded() / 10, forKey: .mean)
        try container.encode((standardDeviation * 10).rounded() / 10, forKey: .stdev)
        try container.encode(max, forKey: .max)
        let percentiles = Self.reportedPercentiles.map { (Self.label($0), value(atPercentile: $0)) }
        try container.encode(Dictionary(uniqueKeysWithValues: percentiles), forKey: .percentiles)
        try container.encode(HistogramCoding.encode(histogram), forKey: .hdr)
    }

    /// `99.9` → "99.9", `50` → "50".
    static func label(_ percentile: Double) -> String {
        percentile == percentile.rounded() ? String(Int(percentile)) : String(percentile)
    }
}
