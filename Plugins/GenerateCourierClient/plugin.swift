import Foundation
import PackagePlugin

/// Writes the generated client into the target's folder, for those who commit generated code:
///
/// ```sh
/// swift package --allow-writing-to-package-directory generate-courier-client --target GoogleStorage
/// ```
///
/// Each target named gets `<Service>.swift`, `<Service>+Queries.swift` and `<Service>+Schemas.swift`
/// beside the Discovery document in its folder (excluded from the target or not), as
/// `courier generate` writes them. Targets are named explicitly: one using the build plugin must
/// not get these files too.
@main
struct GenerateCourierClient: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let names = extractor.extractOption(named: "target")
        guard !names.isEmpty else { throw PluginError("name the targets to generate: --target NAME (repeatable)") }
        let tool = try context.tool(named: "CourierGenerateTool").url
        for case let target as SourceModuleTarget in try context.package.targets(named: names) {
            let files = try FileManager.default.contentsOfDirectory(at: target.directoryURL, includingPropertiesForKeys: nil)
            let document = try discoveryDocument(of: target.name, among: files)
            let process = Process()
            process.executableURL = tool
            process.arguments = [document.path, "--module", target.name, "--output", target.directoryURL.path]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw PluginError("generating \(target.name) from \(document.lastPathComponent) failed")
            }
            print("Generated \(target.name) from \(document.lastPathComponent)")
        }
    }
}
