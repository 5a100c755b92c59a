extension FixedWidthInteger {
    /// `value` rounded toward zero and held within the type's range; NaN is zero.
    ///
    /// For numbers that come from users, files and servers: `Int64(x)` traps when `x` is
    /// infinite, NaN or out of range, and a trap loses everything the process holds.
    ///
    /// Inlinable so that it is specialised where it is called: through the generic entry point,
    /// `courier load`'s timeline paid about 1,400 instructions a conversion (callgrind).
    @inlinable
    package init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value <= Double(Self.min) {
            self = Self.min
        } else if value >= Double(Self.max) {
            // Double(Self.max) rounds up to a power of two, one past the range: the comparison
            // holds for every value the conversion below could not take.
            self = Self.max
        } else {
            self = Self(value)
        }
    }
}
