import Foundation
import PackagePlugin

/// Generates a typed client at build time from the Discovery document in a target, as
/// swift-openapi-generator's build plugin does from `openapi.yaml`:
///
/// ```swift
/// .target(name: "GoogleStorage", dependencies: [.product(name: "Courier", package: "courier")],
///         plugins: [.plugin(name: "CourierGeneratorPlugin", package: "courier")])
/// ```
///
/// with `Sources/GoogleStorage/storage.v1.discovery.json` (any file ending in `discovery.json`,
/// one per target). The module is the target: `--module` is its name.
@main
struct CourierGeneratorPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let documents = target.sourceFiles.map(\.url).filter { $0.lastPathComponent.hasSuffix("discovery.json") }
        guard let document = documents.first else {
            throw PluginError("target \(target.name) has no Discovery document (a file ending in discovery.json)")
        }
        guard documents.count == 1 else {
            throw PluginError("target \(target.name) has \(documents.count) Discovery documents; one module takes one API")
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "GeneratedSources")
        // The outputs are named before the document is read, so after the target, not the service,
        // and apart from a `<Target>.swift` the target may hold.
        let prefix = "\(target.name)Generated"
        let files = ["", "+Queries", "+Schemas"].map { output.appending(path: "\(prefix)\($0).swift") }
        return [
            .buildCommand(
                displayName: "Generating \(target.name) from \(document.lastPathComponent)",
                executable: try context.tool(named: "CourierGenerateTool").url,
                arguments: [document.path, "--module", target.name, "--output", output.path, "--file-prefix", prefix],
                inputFiles: [document],
                outputFiles: files
            ),
        ]
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
