import Foundation

/// The repository's root folder (the one holding Package.swift), found from this file's own
/// path, so tests read committed files whichever folder they live in.
package enum Repository {
    package static let root: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            let parent = folder.deletingLastPathComponent()
            precondition(parent.path != folder.path, "no Package.swift above \(#filePath)")
            folder = parent
        }
        return folder
    }()

    /// A file or folder inside the repository, by its relative path.
    package static func path(_ relative: String) -> URL { root.appendingPathComponent(relative) }
}

extension Repository {
    /// The committed fuzz corpus `name` (Fuzz/corpus/`name`) as (file name, bytes), sorted by name.
    package static func fuzzCorpus(_ name: String) throws -> [(String, Data)] {
        let folder = path("Fuzz/corpus/\(name)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try files.map { ($0, try Data(contentsOf: folder.appendingPathComponent($0))) }
    }
}
