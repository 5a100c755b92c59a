import CourierTestSupport
import Foundation
import Testing

/// How the SDK's own code locks: only with locks the sanitizers can see, so that `make sanitize`
/// reports real races and no false ones.
@Suite struct LockTests {
    /// `Synchronization.Mutex` locks in futex calls ThreadSanitizer cannot see, so every access
    /// under it is reported as a race (CI's TSan run failed on one, in CourierOpenAPI). The SDK
    /// locks with `CourierSync.LockedValue`, which the sanitizers intercept.
    @Test func theSDKLocksOnlyWhatTheSanitizersSee() throws {
        let files = try Repository.handWrittenCode()
        let found = files.filter { $0.code.contains(/\bMutex\s*</) }.map(\.path)
        #expect(files.count > 200)
        #expect(found.isEmpty, "use LockedValue instead of Synchronization.Mutex in: \(found)")
    }
}
