@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// What a release promises (CONTRIBUTING.md, "Versions"): the version the SDK sends is the
/// CHANGELOG's newest release, and the SDK carries no deprecated name before a release has
/// made one worth keeping.
@Suite struct ReleaseTests {
    /// `@available(…, deprecated …)` in Swift code, comments and string literals left out (the
    /// generator writes Google's own deprecations into the clients it renders).
    static func deprecations(in code: String) -> [String] {
        let stripped = code.replacing(/\/\/[^\n]*/, with: "").replacing(/"(?:\\.|[^"\\\n])*"/, with: "\"\"")
        return stripped.split(separator: "\n").filter { $0.contains(/@available\s*\([^)]*\bdeprecated\b/) }.map(String.init)
    }

    @Test func theScanFindsADeprecation() {
        #expect(Self.deprecations(in: "@available(*, deprecated, renamed: \"x\")\nvar a = 1").count == 1)
        #expect(Self.deprecations(in: "@available(macOS, introduced: 10.15, deprecated: 12)\nfunc f() {}").count == 1)
        #expect(Self.deprecations(in: "// @available(*, deprecated)\nlet s = \"@available(*, deprecated)\"").isEmpty)
    }

    /// The SDK's sources (the generated Google clients aside, whose deprecations are Google's).
    @Test func theSDKDeprecatesNothing() throws {
        let files = try Repository.handWrittenCode()
        let found = files.flatMap { file in Self.deprecations(in: file.code).map { "\(file.path): \($0)" } }
        #expect(files.count > 150)
        #expect(found.isEmpty, "deprecated names in the SDK:\n\(found.joined(separator: "\n"))")
    }

    @Test func theVersionSentIsTheNewestReleaseInTheChangelog() throws {
        let changelog = try String(contentsOf: Repository.path("CHANGELOG.md"), encoding: .utf8)
        let release = try #require(changelog.firstMatch(of: /(?m)^## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})$/),
                                   "CHANGELOG.md has no `## x.y.z — YYYY-MM-DD` section")
        #expect(String(release.output.1) == CourierVersion.version)
        #expect(CourierVersion.userAgent.hasPrefix("Courier/\(CourierVersion.version) "))
        // Nothing released sits above the newest release but an `Unreleased` section.
        let sectionsAbove = changelog[..<release.range.lowerBound].split(separator: "\n").filter { $0.hasPrefix("## ") }
        #expect(sectionsAbove.allSatisfy { $0 == "## Unreleased" } && sectionsAbove.count <= 1, "\(sectionsAbove)")
    }
}
