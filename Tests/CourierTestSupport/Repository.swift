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

extension Repository {
    /// Every Swift file under the folder `relative`, as its path inside that folder and its code
    /// with comments and string literals blanked (so the source checks match code, not prose).
    package static func swiftCode(under relative: String) throws -> [(path: String, code: String)] {
        let folder = path(relative)
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var files: [(String, String)] = []
        while let file = enumerator?.nextObject() as? String {
            guard file.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            files.append((file, text.replacing(/\/\/[^\n]*/, with: "").replacing(/"(?:\\.|[^"\\\n])*"/, with: "\"\"")))
        }
        return files
    }
}

extension Repository {
    /// The Swift files of the Sources folders people write (all but the generated Google
    /// clients), as `swiftCode(under:)` gives them, with paths from the repository's root.
    package static func handWrittenCode() throws -> [(path: String, code: String)] {
        let targets = try FileManager.default.contentsOfDirectory(atPath: path("Sources").path)
            .filter { !["GoogleStorage", "GoogleTasks"].contains($0) }.sorted()
        return try targets.flatMap { target in
            try swiftCode(under: "Sources/\(target)").map { ("Sources/\(target)/\($0.path)", $0.code) }
        }
    }
}
