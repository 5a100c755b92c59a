#if canImport(Glibc)
import Glibc
#endif

/// A value behind a `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex`, which on Linux locks with raw futex calls that
/// ThreadSanitizer cannot see: every access under it showed as a data race, hiding any real
/// one. pthread mutexes are intercepted by the sanitizers and cost the same uncontended.
package final class LockedValue<Value>: @unchecked Sendable {
    // The mutex already makes every access exclusive; the runtime's own check would cost two
    // calls and a thread-local lookup per access (several times per request on the loop).
    @exclusivity(unchecked) private var value: Value
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
