/// Near-equal parts of a file or an object, for the features that move one in pieces (sliced
/// downloads, parallel composite uploads).
package enum ByteRanges {
    /// `0..<total` in at most `count` contiguous, non-empty ranges in order, each as long as the
    /// first but the last. Sizes near Int64.max come from servers and callers: the part size is
    /// rounded up by division (not `total + count - 1`), and each end found by subtraction.
    package static func split(_ total: Int64, into count: Int) -> [Range<Int64>] {
        guard total > 0, count > 0 else { return [] }
        let parts = Int64(count)
        let size = total / parts + (total % parts == 0 ? 0 : 1)
        var ranges: [Range<Int64>] = []
        ranges.reserveCapacity(count)
        var start: Int64 = 0
        while start < total {
            let end = total - start > size ? start + size : total
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }
}
