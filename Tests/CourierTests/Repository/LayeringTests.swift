import CourierTestSupport
import Foundation
import Testing

/// The layering rule of Docs/Architecture.md ("## Layers"), checked on the sources: a file may
/// name a type declared in another folder only if the file's row of the table lists that folder.
/// The table is the rule's one home; this test reads it.
@Suite struct LayeringTests {
    static let sources = Repository.path("Sources/Courier")

    /// Folder → the folders it may use (its group included).
    static func rule() throws -> [String: Set<String>] {
        let text = try String(contentsOf: Repository.path("Docs/Architecture.md"), encoding: .utf8)
        let section = text.components(separatedBy: "## Layers").dropFirst().first?.components(separatedBy: "\n## ").first ?? ""
        var allowed: [String: Set<String>] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { String($0) }
            let names = { (cell: String) in Set(cell.matches(of: /`([A-Za-z]+)`/).map { String($0.output.1) }) }
            let group = names(cells[1])
            for folder in group { allowed[folder] = group.union(names(cells[2])) }
        }
        return allowed
    }

    /// Every Swift file of the SDK by its top folder, with comments and string literals removed.
    static func files() throws -> [(path: String, folder: String, code: String)] {
        try Repository.swiftCode(under: "Sources/Courier").filter { $0.path.contains("/") }.map {
            ($0.path, String($0.path.split(separator: "/")[0]), $0.code)
        }
    }

    @Test func everyFolderUsesOnlyTheLayersItsRowAllows() throws {
        let rule = try Self.rule()
        let files = try Self.files()
        let folders = Set(files.map(\.folder))
        #expect(folders.count >= 15)
        for folder in folders { #expect(rule[folder] != nil, "Sources/Courier/\(folder) has no row in Architecture.md's layer table") }

        // Who owns each top-level type: the folder of the file that declares it.
        var owner: [String: String] = [:]
        let declaration = /(?m)^(?:(?:public|package|internal|fileprivate|private|final|indirect|@\w+(?:\([^)]*\))?)\s+)*(?:struct|class|enum|actor|protocol|typealias)\s+([A-Z]\w*)/
        for file in files {
            for match in file.code.matches(of: declaration) { owner[String(match.output.1)] = owner[String(match.output.1)] ?? file.folder }
        }
        #expect(owner.count > 100)

        var violations: [String] = []
        for file in files {
            let allowed = rule[file.folder] ?? []
            for name in Set(file.code.matches(of: /\b[A-Z]\w*\b/).map { String($0.output) }) {
                guard let other = owner[name], other != file.folder, !allowed.contains(other) else { continue }
                violations.append("\(file.path) uses \(name) from \(other)/")
            }
        }
        #expect(violations.isEmpty, "layer violations:\n\(violations.sorted().joined(separator: "\n"))")
    }

    @Test func theRuleCatchesAViolation() throws {
        // The check must be able to fail: Transport may not name the service.
        let rule = try Self.rule()
        #expect(rule["Transport"]?.contains("Service") == false)
        #expect(rule["HTTP"]?.contains("Service") == false)
        #expect(rule["Upload"]?.contains("Batch") == false)
    }
}
