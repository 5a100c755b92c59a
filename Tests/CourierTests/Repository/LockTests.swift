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
        var found: [String] = []
        var files = 0
        for target in try Repository.handWrittenTargets() {
            for file in try Repository.swiftCode(under: "Sources/\(target)") {
                files += 1
                if file.code.contains(/\bMutex\s*</) { found.append("Sources/\(target)/\(file.path)") }
            }
        }
        #expect(files > 200)
        #expect(found.isEmpty, "use LockedValue instead of Synchronization.Mutex in: \(found)")
    }
}
