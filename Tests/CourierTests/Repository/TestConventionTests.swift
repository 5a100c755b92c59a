import CourierTestSupport
import Foundation
import Testing

/// Conventions every test target keeps, so no suite silently skips the checks the others get.
@Suite struct TestConventionTests {
    /// Tests make services through `withCheckedService` (the leak check after shutdown); a bare
    /// `withService` would be Courier's own, unchecked. `CourierTestHelper` is the exception: a
    /// program the tests start as a user's would be, in an environment of their choosing, which
    /// makes its services as users do; the support library with the check is a test library.
    @Test func everyTestServiceIsLeakChecked() throws {
        let files = try Repository.swiftCode(under: "Tests")
        for file in files where !file.path.hasPrefix("CourierTestHelper/") {
            let bare = file.code.matches(of: /(?:^|[^A-Za-z])withService\s*[({]/).count
            #expect(bare == 0, "Tests/\(file.path) calls withService \(bare) times: use withCheckedService")
        }
        #expect(files.count > 50)
    }

    /// The SDK's tests mirror its sources: every folder of Tests/CourierTests is a folder of
    /// Sources/Courier, except the suites that span layers (`Netem`, `Repository`).
    @Test func theSDKsTestFoldersMirrorItsSourceFolders() throws {
        let sources = Set(try FileManager.default.contentsOfDirectory(atPath: Repository.path("Sources/Courier").path))
        let tests = try FileManager.default.contentsOfDirectory(atPath: Repository.path("Tests/CourierTests").path)
        #expect(tests.count >= 15)
        for folder in tests where !["Netem", "Repository"].contains(folder) {
            #expect(!folder.hasSuffix(".swift"), "Tests/CourierTests/\(folder) belongs in the folder of the source it tests")
            #expect(folder.hasSuffix(".swift") || sources.contains(folder), "Tests/CourierTests/\(folder) has no Sources/Courier/\(folder)")
        }
    }
}
