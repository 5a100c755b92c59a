import ArgumentParser
import CourierGenerator
import Foundation

/// `courier generate`: a typed Swift client from a Google Discovery document.
public struct GenerateCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a typed Swift client module from a Google Discovery document.",
        discussion: """
            Writes <Service>.swift (the API description and scopes), <Service>+Schemas.swift (one \
            APIObject per schema) and <Service>+Queries.swift (one query struct per method) into \
            the output folder. The module depends on Courier.

            Example:
              courier generate storage.v1.json --module GoogleStorage --output Sources/GoogleStorage
              courier generate storage.v1.json          # the same: the module is named from the document
            """
    )

    @Argument(help: "The discovery document (JSON), as https://www.googleapis.com/discovery/v1/apis/<api>/<version>/rest serves it.")
    var document: String

    @Option(help: """
        The Swift module the code is compiled into (type references are qualified with it). \
        Default: the output folder's name, else Google<Name> from the document (storage → GoogleStorage).
        """)
    var module: String?

    @Option(help: "The folder to write the files into (default: Sources/<module>).")
    var output: String?

    @Option(help: "The service namespace enum (default: the document's name, as in Storage).")
    var serviceName: String?

    @Flag(help: "Only check that the folder is up to date; exit 1 if generating would change it.")
    var check = false

    public init() {}

    public func validate() throws {
        if let module, !Generator.isIdentifier(module) { throw ValidationError("--module must be a Swift identifier") }
    }

    public func run() async throws {
        guard let data = FileManager.default.contents(atPath: document) else { throw ValidationError("cannot read \(document)") }
        let module = try module ?? Generator.defaultModuleName(discovery: data, outputFolder: output)
        let started = ContinuousClock.now
        let generated = try Generator.generate(discovery: data, moduleName: module, serviceName: serviceName)
        let elapsed = ContinuousClock.now - started
        let folder = URL(fileURLWithPath: output ?? "Sources/\(module)")
        if check {
            let stale = generated.files.filter {
                FileManager.default.contents(atPath: folder.appendingPathComponent($0.name).path) != Data($0.contents.utf8)
            }
            guard stale.isEmpty else {
                Terminal.note("courier generate: \(stale.map(\.name).joined(separator: ", ")) in \(folder.path) are out of date: run `make generate`")
                throw ExitCode.failure
            }
            return
        }
        try generated.write(to: folder)
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        Terminal.note(String(format: "courier generate: %@ → %@ (%d files, %d lines) in %.0f ms", document, folder.path,
                             generated.files.count, generated.lineCount, milliseconds))
    }
}
