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
    ///
    /// Bucket by bucket when both have the same layout, as every distribution Courier makes or
    /// decodes does; otherwise value by value, since HdrHistogram's own `add` traps on a layout
    /// it cannot take (a histogram a caller built with ``init(histogram:)``).
    public mutating func add(_ other: LatencyDistribution) {
        if Self.sameLayout(histogram, other.histogram) {
            histogram.add(other.histogram)
            return
        }
        for recorded in other.histogram.recordedValues() {
            _ = histogram.record(Swift.min(Swift.max(recorded.value, histogram.lowestDiscernibleValue), histogram.highestTrackableValue),
                                 count: recorded.count)
        }
    }

    private static func sameLayout(_ mine: Histogram<UInt64>, _ other: Histogram<UInt64>) -> Bool {
        mine.numberOfSignificantValueDigits == other.numberOfSignificantValueDigits
            && mine.lowestDiscernibleValue == other.lowestDiscernibleValue
            && other.highestTrackableValue <= mine.highestTrackableValue
    }

    /// The most requests a distribution read from a file may hold: 2⁵⁰, so that thousands of
    /// merged files still add up within `Int`.
    static let largestCount: UInt64 = 1 << 50

    /// Whether `histogram` is laid out as Courier's are (one microsecond to an hour, `digits`
    /// significant digits) and holds no more than ``largestCount``: what a result file must have.
    static func isStandard(_ histogram: Histogram<UInt64>, digits: SignificantDigits) -> Bool {
        histogram.lowestDiscernibleValue == 1 && histogram.highestTrackableValue == highestTrackable
            && histogram.numberOfSignificantValueDigits == digits && histogram.totalCount <= largestCount
    }

    public var count: Int { Int(clamping: histogram.totalCount) }
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
        guard Self.isStandard(histogram, digits: .three) else {
            throw LoadError.invalidResult("a latency histogram is not laid out as Courier's (1 µs to an hour, three digits, at most 2^50 counts)")
        }
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
        percentile == percentile.rounded() && abs(percentile) < 1e15 ? String(Int(percentile)) : String(percentile)
    }
}
