import Foundation

/// Discovery document → Swift module, in three stages, as swift-openapi-generator does it:
/// **parse** (``DiscoveryDocument``), **translate** (a small model of the Swift declarations)
/// and **render** (deterministic text, no formatter).
///
/// ```swift
/// let module = try Generator.generate(discovery: Data(contentsOf: storageJSON), moduleName: "GoogleStorage")
/// try module.write(to: URL(fileURLWithPath: "Sources/GoogleStorage"))
/// ```
public enum Generator {
    /// Generates the module's files.
    ///
    /// - Parameters:
    ///   - moduleName: the Swift module the files are compiled into; type references are
    ///     qualified with it, so resources and types of the same name do not shadow each other.
    ///   - serviceName: the namespace enum (`Storage`); the document's `name` in UpperCamelCase by default.
    ///   - filePrefix: names the files `<prefix>.swift`, `<prefix>+Queries.swift` and
    ///     `<prefix>+Schemas.swift`; the service name by default. The build plugin sets it, since
    ///     it must name its outputs before the document is read.
    ///   - idempotency: the API's retry classes by method (``IdempotencyTable``); the built-in
    ///     table of the document's API and version by default, if there is one.
    public static func generate(discovery: Data, moduleName: String, serviceName: String? = nil,
                                filePrefix: String? = nil, idempotency: IdempotencyTable? = nil) throws -> GeneratedModule {
        let document = try DiscoveryDocument.parse(discovery)
        let model = try Translator(document: document, moduleName: moduleName, serviceName: serviceName,
                                   idempotency: idempotency).translate()
        let files = Renderer(module: model).render(filePrefix: filePrefix).map { GeneratedModule.File(name: $0.name, contents: $0.contents) }
        return GeneratedModule(moduleName: moduleName, files: files)
    }

    /// The module name when none is given: the output folder's name when it is a Swift
    /// identifier (`Sources/GoogleStorage` → `GoogleStorage`, as SwiftPM names a target after its
    /// folder), else `Google` and the document's `name` in UpperCamelCase (`storage` →
    /// `GoogleStorage`, the shipped clients' names).
    public static func defaultModuleName(discovery: Data, outputFolder: String?) throws -> String {
        if let folder = outputFolder.map({ URL(fileURLWithPath: $0).lastPathComponent }), isIdentifier(folder) {
            return folder
        }
        let document = try DiscoveryDocument.parse(discovery)
        let name = "Google" + Names.upperCamel(document.name)
        guard isIdentifier(name) else { throw GeneratorError.invalidDiscoveryDocument("no module name can be made from \"\(document.name)\"") }
        return name
    }

    /// A Swift identifier a module can be named: a letter, then letters, digits and underscores.
    public static func isIdentifier(_ name: String) -> Bool {
        name.first?.isLetter == true && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }
}

/// The generated source files of one module.
public struct GeneratedModule: Sendable, Equatable {
    public struct File: Sendable, Equatable {
        public var name: String
        public var contents: String
    }

    public var moduleName: String
    public var files: [File]

    /// All lines of all files.
    public var lineCount: Int { files.reduce(0) { $0 + $1.contents.utf8.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } } }

    /// Writes the files into `directory` (created if needed), replacing generated files there
    /// and leaving any others alone. Files whose contents did not change are not touched.
    public func write(to directory: URL) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for file in files {
                let url = directory.appendingPathComponent(file.name)
                let data = Data(file.contents.utf8)
                if FileManager.default.contents(atPath: url.path) == data { continue }
                try data.write(to: url, options: .atomic)
            }
        } catch {
            throw GeneratorError.cannotWrite("\(directory.path): \(error.localizedDescription)")
        }
    }
}
