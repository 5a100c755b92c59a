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
/// with `Sources/GoogleStorage/storage.v1.json` (any name: the document is the JSON file whose
/// `kind` is `discovery#restDescription`, one per target). The module is the target: `--module` is
/// its name.
@main
struct CourierGeneratorPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let document = try discoveryDocument(of: target.name, among: target.sourceFiles.map(\.url))
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
