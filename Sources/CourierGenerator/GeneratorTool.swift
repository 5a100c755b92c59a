import Foundation

/// The command line of `CourierGenerateTool`, the SwiftPM plugins' generator:
///
///     CourierGenerateTool DOCUMENT --module NAME --output FOLDER [--file-prefix PREFIX]
///     CourierGenerateTool API:VERSION --module NAME --output FOLDER [--discovery-root URL] [--api-key KEY]
///
/// DOCUMENT is a file; API:VERSION (drive:v3) is fetched from Google's Discovery service.
public enum GeneratorTool {
    /// Runs the command line `arguments` (without the program's name) and exits: 0 once the files
    /// are written, 1 with the reason on standard error and nothing written.
    public static func main(name: String, arguments: [String]) async -> Never {
        func fail(_ message: String) -> Never {
            try? FileHandle.standardError.write(contentsOf: Data("\(name): \(message)\n".utf8))
            exit(1)
        }
        var remaining = arguments[...]
        var document: String?
        var options: [String: String] = [:]
        while let argument = remaining.popFirst() {
            if argument.hasPrefix("--") {
                guard let value = remaining.popFirst() else { fail("\(argument) needs a value") }
                options[String(argument.dropFirst(2))] = value
            } else if document == nil {
                document = argument
            } else {
                fail("unexpected argument \(argument)")
            }
        }
        guard let document, let output = options["output"] else {
            fail("usage: \(name) DOCUMENT|API:VERSION --module NAME --output FOLDER [--file-prefix PREFIX] [--discovery-root URL] [--api-key KEY]")
        }
        guard let root = DiscoveryName.root(options["discovery-root"] ?? DiscoveryName.googleRoot.absoluteString) else {
            fail("--discovery-root must be an http or https URL")
        }
        let data: Data
        do {
            data = try await DiscoveryName.document(document, root: root, apiKey: options["api-key"])
        } catch {
            fail("\(error); nothing written")
        }
        do {
            let module = try options["module"] ?? Generator.defaultModuleName(discovery: data, outputFolder: output)
            guard Generator.isIdentifier(module) else { fail("--module must be a Swift identifier") }
            let generated = try Generator.generate(discovery: data, moduleName: module, filePrefix: options["file-prefix"])
            try generated.write(to: URL(fileURLWithPath: output))
        } catch {
            fail("\(document): \(error)")
        }
        exit(0)
    }
}
