import CourierGenerator
import Foundation

// The generator alone, for the SwiftPM plugins: `courier generate` without the rest of the
// `courier` command (load engine, test server), so a package using the plugin builds only this.
//
//   CourierGenerateTool DOCUMENT --module NAME --output FOLDER [--file-prefix PREFIX]
//   CourierGenerateTool API:VERSION --module NAME --output FOLDER [--discovery-root URL] [--api-key KEY]
//
// DOCUMENT is a file; API:VERSION (drive:v3) is fetched from Google's Discovery service.

func fail(_ message: String) -> Never {
    try? FileHandle.standardError.write(contentsOf: Data("CourierGenerateTool: \(message)\n".utf8))
    exit(1)
}

var arguments = CommandLine.arguments.dropFirst()
var document: String?
var options: [String: String] = [:]
while let argument = arguments.popFirst() {
    if argument.hasPrefix("--") {
        guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
        options[String(argument.dropFirst(2))] = value
    } else if document == nil {
        document = argument
    } else {
        fail("unexpected argument \(argument)")
    }
}
guard let document, let output = options["output"] else {
    fail("usage: CourierGenerateTool DOCUMENT|API:VERSION --module NAME --output FOLDER [--file-prefix PREFIX] [--discovery-root URL] [--api-key KEY]")
}

/// The file's bytes, else the named API's document fetched.
func load(_ document: String, root: String?, apiKey: String?) async -> Data {
    if let data = FileManager.default.contents(atPath: document) { return data }
    guard let name = DiscoveryName(document) else {
        fail(DiscoveryName.lacksVersion(document) ? "\(document) is not a file, and as an API name it lacks its version (drive:v3)" : "cannot read \(document)")
    }
    guard let root = URL(string: root ?? DiscoveryName.googleRoot.absoluteString), root.host != nil else {
        fail("--discovery-root must be an http or https URL")
    }
    do {
        return try await name.fetch(root: root, apiKey: apiKey)
    } catch {
        fail("\(error); nothing written")
    }
}

let data = await load(document, root: options["discovery-root"], apiKey: options["api-key"])
do {
    let module = try options["module"] ?? Generator.defaultModuleName(discovery: data, outputFolder: output)
    guard Generator.isIdentifier(module) else { fail("--module must be a Swift identifier") }
    let generated = try Generator.generate(discovery: data, moduleName: module, filePrefix: options["file-prefix"])
    try generated.write(to: URL(fileURLWithPath: output))
} catch {
    fail("\(document): \(error)")
}
