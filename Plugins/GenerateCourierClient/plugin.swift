import Foundation
import PackagePlugin

/// Writes the generated client into the target's folder, for those who commit generated code:
///
/// ```sh
/// swift package --allow-writing-to-package-directory generate-courier-client --target GoogleStorage
/// swift package --allow-writing-to-package-directory generate-courier-client --target GoogleDrive --api drive:v3
/// ```
///
/// Each target named gets `<Service>.swift`, `<Service>+Queries.swift` and `<Service>+Schemas.swift`
/// in its folder, as `courier generate` writes them: from the Discovery document beside them
/// (excluded from the target or not), or with `--api <name>:<version>` (one target) from Google's
/// Discovery service, fetched with libcurl (`--discovery-root URL` for another server,
/// `--api-key KEY` optional; on macOS add `--disable-sandbox`, as the plugin sandbox has no network).
/// Targets are named explicitly: one using the build plugin must not
/// get these files too.
@main
struct GenerateCourierClient: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) throws {
        var extractor = ArgumentExtractor(arguments)
        let names = extractor.extractOption(named: "target")
        let apis = extractor.extractOption(named: "api")
        let fetching = extractor.extractOption(named: "discovery-root").flatMap { ["--discovery-root", $0] }
            + extractor.extractOption(named: "api-key").flatMap { ["--api-key", $0] }
        guard !names.isEmpty else { throw PluginError("name the targets to generate: --target NAME (repeatable)") }
        guard apis.count <= 1, apis.isEmpty || names.count == 1 else {
            throw PluginError("--api names one API for one target: --target GoogleDrive --api drive:v3")
        }
        guard extractor.remainingArguments.isEmpty else {
            throw PluginError("unexpected arguments: \(extractor.remainingArguments.joined(separator: " "))")
        }
        let tool = try context.tool(named: "CourierGenerateTool").url
        for case let target as SourceModuleTarget in try context.package.targets(named: names) {
            let source: String
            if let api = apis.first {
                source = api
            } else {
                let files = try FileManager.default.contentsOfDirectory(at: target.directoryURL, includingPropertiesForKeys: nil)
                source = try discoveryDocument(of: target.name, among: files).path
            }
            let process = Process()
            process.executableURL = tool
            process.arguments = [source, "--module", target.name, "--output", target.directoryURL.path] + (apis.isEmpty ? [] : fetching)
            try process.run()
            process.waitUntilExit()
            let shown = apis.first ?? URL(fileURLWithPath: source).lastPathComponent
            guard process.terminationStatus == 0 else { throw PluginError("generating \(target.name) from \(shown) failed") }
            print("Generated \(target.name) from \(shown)")
        }
    }
}
