import Foundation

// Shared by both plugins through a symbolic link in each one's folder: a plugin cannot depend
// on a library target, so this is how they keep one copy.

/// The Discovery documents among `urls`: JSON files whose `kind` is `discovery#restDescription`,
/// whatever their names (`storage.v1.json`, `discovery.json`), so other JSON in a target is left alone.
func discoveryDocuments(among urls: [URL]) -> [URL] {
    urls.filter { url in
        guard url.pathExtension == "json", let data = FileManager.default.contents(atPath: url.path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return false }
        return object["kind"] as? String == "discovery#restDescription"
    }
}

/// The one document of `target`, or an error saying there is none or more than one module can take.
func discoveryDocument(of target: String, among urls: [URL]) throws -> URL {
    let documents = discoveryDocuments(among: urls)
    guard let document = documents.first else {
        throw PluginError("target \(target) has no Discovery document (JSON with \"kind\": \"discovery#restDescription\")")
    }
    guard documents.count == 1 else {
        throw PluginError("target \(target) has \(documents.count) Discovery documents; one module takes one API")
    }
    return document
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
