#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Nanoseconds on the monotonic clock: two vDSO reads per request, no `Duration` arithmetic.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
