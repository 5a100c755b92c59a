#if canImport(Glibc)
import Glibc
#endif

/// A value behind a `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex`, which on Linux locks with raw futex calls that
/// ThreadSanitizer cannot see: every access under it showed as a data race, hiding any real
/// one. pthread mutexes are intercepted by the sanitizers and cost the same uncontended.
///
/// Public, not `package`, though no product exports this module: Swift 6.3 serializes the body
/// of an `@inlinable` `package` function only under package-wide cross-module optimization, so
/// as `package` every caller in `Courier` called the unspecialized generic `withLock` (see
/// Docs/Performance.md).
public final class LockedValue<Value>: @unchecked Sendable {
    // The mutex already makes every access exclusive; the runtime's own check would cost two
    // calls and a thread-local lookup per access (several times per request on the loop).
    @exclusivity(unchecked) @usableFromInline var value: Value
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    /// A lock around `value`.
    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, under the lock. Inlinable, so each caller gets a copy
    /// specialized to its types instead of a generic call through metadata and value witnesses.
    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
