import Foundation

/// A run's timeline reduced to what a bootstrap resamples: each interval's latency counts over one
/// grid of values, and its requests and errors.
///
/// Why intervals and not requests: requests close in time share the machine's state (a GC pause,
/// a busy neighbour, a full queue), so they are not independent, and resampling them one by one
/// makes intervals far too narrow. Whole seconds are nearly independent of one another; drawing
/// them with replacement (a block bootstrap) keeps the variation a run really has.
struct IntervalResampler {
    /// The distinct latencies recorded anywhere in the run (each bucket's highest equivalent
    /// value), ascending.
    let values: [UInt64]
    /// Per interval: (index into ``values``, count), for the buckets it recorded.
    let counts: [[(value: Int, count: Int)]]
    let requests: [Int]
    let errors: [Int]
    /// Seconds per interval.
    let width: Double
    /// Intervals wholly inside the run (the last is partial when the run ended within it): only
    /// these measure a rate.
    let full: Int

    init(_ timeline: LoadTimeline, durationSeconds: Double) {
        var perInterval: [[(UInt64, Int)]] = []
        var all = Set<UInt64>()
        for interval in timeline.intervals {
            let histogram = interval.latency.histogram
            let recorded = histogram.recordedValues().map { (histogram.highestEquivalentForValue($0.value), Int($0.count)) }
            all.formUnion(recorded.map(\.0))
            perInterval.append(recorded)
        }
        values = all.sorted()
        let position = Dictionary(uniqueKeysWithValues: values.enumerated().map { ($1, $0) })
        counts = perInterval.map { $0.map { (position[$0.0]!, $0.1) } }
        requests = timeline.intervals.map(\.requests)
        errors = timeline.intervals.map(\.errors)
        width = Double(timeline.intervalSeconds)
        let whole = Int(saturating: (durationSeconds / width + 1e-6).rounded(.down))
        full = min(timeline.intervals.count, max(0, whole))
    }

    var intervals: Int { counts.count }

    /// One bootstrap replicate: the figures of `intervals` intervals drawn with replacement.
    struct Sample {
        /// Latency counts per value of the grid.
        var histogram: [Int]
        var requests = 0
        var errors = 0
        /// Requests and seconds of the full intervals drawn (for the rate).
        var fullRequests = 0
        var fullSeconds = 0.0

        /// The latency at `percentile`, as HdrHistogram picks it: the first value at which the
        /// cumulative count reaches the percentile's share, rounded up.
        func value(atPercentile percentile: Double, values: [UInt64]) -> Double {
            // Each interval's histogram holds its requests exactly (checked when a result is read).
            guard requests > 0 else { return 0 }
            let wanted = max(1, Int(saturating: (percentile / 100 * Double(requests)).rounded(.up)))
            var running = 0
            for (index, count) in histogram.enumerated() {
                running += count
                if running >= wanted { return Double(values[index]) }
            }
            return Double(values.last ?? 0)
        }

        func mean(values: [UInt64]) -> Double {
            var sum = 0.0
            for (index, count) in histogram.enumerated() where count > 0 { sum += Double(values[index]) * Double(count) }
            return requests > 0 ? sum / Double(requests) : 0
        }
    }

    /// Draws as many intervals as the run has, with replacement.
    func sample(using generator: inout some RandomNumberGenerator) -> Sample {
        var sample = Sample(histogram: Array(repeating: 0, count: values.count))
        for _ in 0..<intervals {
            let index = Int.random(in: 0..<intervals, using: &generator)
            for entry in counts[index] { sample.histogram[entry.value] += entry.count }
            sample.requests += requests[index]
            sample.errors += errors[index]
            if index < full {
                sample.fullRequests += requests[index]
                sample.fullSeconds += width
            }
        }
        return sample
    }
}

/// SplitMix64: a small, fast generator with a seed, so the same two results always compare the same.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
