@testable import Courier
import Testing

@Suite struct FixedWidthIntegerSaturatingTests {
    /// What `Int64(x)` traps on is held at the type's ends; NaN is zero; the rest rounds toward
    /// zero as the plain conversion does.
    @Test func conversionsHoldAtTheEnds() {
        #expect(Int64(saturating: .infinity) == .max)
        #expect(Int64(saturating: -.infinity) == .min)
        #expect(Int64(saturating: .nan) == 0)
        #expect(Int64(saturating: 1e300) == .max)
        #expect(Int64(saturating: 9_223_372_036_854_775_807.0) == .max) // rounds to 2^63, one past the range
        #expect(Int64(saturating: -9_223_372_036_854_775_808.0) == .min)
        #expect(Int64(saturating: 9_223_372_036_854_774_784.0) == 9_223_372_036_854_774_784) // the largest Double below 2^63
        #expect(Int64(saturating: -2.9) == -2)
        #expect(UInt64(saturating: -5) == 0)
        #expect(UInt64(saturating: 1.8446744073709552e19) == .max)
        #expect(UInt64(saturating: 12.7) == 12)
        #expect(Int32(saturating: 3e9) == .max)
        #expect(UInt8(saturating: 255.9) == 255)
        #expect(Int(saturating: 1e18) == 1_000_000_000_000_000_000)
    }
}
