import CourierTestSupport
import Foundation
import Testing

/// Conventions every test target keeps, so no suite silently skips the checks the others get.
@Suite struct TestConventionTests {
    /// Tests make services through `withCheckedService` (the leak check after shutdown); a bare
    /// `withService(` would be Courier's own, unchecked.
    @Test func everyTestServiceIsLeakChecked() throws {
        let tests = Repository.path("Tests")
        let enumerator = FileManager.default.enumerator(atPath: tests.path)
        var files = 0
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            files += 1
            let text = try String(contentsOf: tests.appendingPathComponent(path), encoding: .utf8)
                .replacing(/\/\/[^\n]*/, with: "").replacing(/"(?:\\.|[^"\\\n])*"/, with: "\"\"")
            let bare = text.matches(of: /(?:^|[^A-Za-z])withService\(/).count
            #expect(bare == 0, "Tests/\(path) calls withService( \(bare) times: use withCheckedService")
        }
        #expect(files > 50)
    }
}
