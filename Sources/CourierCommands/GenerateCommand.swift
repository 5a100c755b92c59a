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

            The document is a file, or an API named by name and version (drive:v3), fetched from \
            Google's Discovery service (no credentials needed; --api-key is sent when given). Each \
            file records the document's revision and etag; with a name, --check also says when \
            Google's document has changed since.

            Example:
              courier generate storage.v1.json --module GoogleStorage --output Sources/GoogleStorage
              courier generate storage.v1.json          # the same: the module is named from the document
              courier generate drive:v3                 # fetched; module GoogleDrive in Sources/GoogleDrive
              courier generate drive:v3 --check         # exit 1 when Google's document changed
            """
    )

    @Argument(help: """
        The discovery document: a JSON file, as https://www.googleapis.com/discovery/v1/apis/<api>/<version>/rest \
        serves it, or <api>:<version> (drive:v3) to fetch it from there.
        """)
    var document: String

    @Option(help: "Where <api>:<version> documents are fetched from (default: https://www.googleapis.com/).")
    var discoveryRoot: String = DiscoveryName.googleRoot.absoluteString

    @Option(help: "An API key to send when fetching (optional; the Discovery service needs none).")
    var apiKey: String?

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
        guard DiscoveryName.root(discoveryRoot) != nil else {
            throw ValidationError("--discovery-root must be an http or https URL: \(discoveryRoot)")
        }
        if !FileManager.default.fileExists(atPath: document), DiscoveryName(document) == nil {
            throw ValidationError(DiscoveryName.unreadable(document))
        }
    }

    /// The document's bytes: the file, else the named API fetched.
    func load() async throws -> Data {
        do {
            return try await DiscoveryName.document(document, root: DiscoveryName.root(discoveryRoot)!, apiKey: apiKey)
        } catch let error as DiscoveryFetchError {
            Terminal.note("courier generate: \(error.message); nothing written")
            throw ExitCode.failure
        }
    }

    public func run() async throws {
        let data = try await load()
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
                let fresh = DiscoveryStamp(try DiscoveryDocument.parse(data))
                let recorded = stale.lazy.compactMap { file in
                    (try? String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8)).flatMap(DiscoveryStamp.recorded)
                }.first
                if let recorded, recorded != fresh {
                    Terminal.note("courier generate: the \(document) document changed (\(recorded.change(to: fresh))): \(folder.path) is out of date; generate again")
                } else {
                    Terminal.note("courier generate: \(stale.map(\.name).joined(separator: ", ")) in \(folder.path) are out of date: run `make generate`")
                }
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
