extension Array {
    /// `reverse()` by moving each element rather than copying it: `Array`'s own swaps copy a
    /// non-trivial element (a result holding a response) and destroy the original, through
    /// the runtime's value witnesses, about 400 instructions per result. The buffer's swaps move.
    mutating func reverseByMoving() {
        withUnsafeMutableBufferPointer { $0.reverse() }
    }
}
