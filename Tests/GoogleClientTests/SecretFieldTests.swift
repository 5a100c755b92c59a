import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// Secrets an API answers with, in its own words: Cloud Storage's `hmacKeys.create` returns the
/// key's `secret` once, and a caller that logs traffic or prints what it got must not write it
/// down. The HTTP log printed it whole and `print(key)` showed every field before.
@Suite struct SecretFieldTests {
    @Test func anHMACKeysSecretReachesTheCallerAndNoLogOrDescription() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-secret-fields-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try await StorageTestbench.withEmulator(configure: { configuration in
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
        }) { _, service in
            try await service.execute(Storage.Projects.HmacKeys.create(projectId: "p", serviceAccountEmail: "sa@p.iam.gserviceaccount.com"))
        }
        let secret = try #require(key.secret)
        #expect(secret.contains("s3kr1t"), "the emulator's secret carries the secret scan's marker")
        #expect(key.json["secret"]?.stringValue == secret && key.jsonString.contains(secret), "the data itself is whole")

        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "txt" }
        let logged = try files.map { try String(contentsOf: $0, encoding: .utf8) }
        #expect(logged.count == 1)
        var dumped = ""
        dump(key, to: &dumped)
        let accessID = try #require(key.metadata?.accessId)
        for text in logged + ["\(key)", String(reflecting: key), dumped] {
            #expect(!text.contains(secret), "\(text)")
            #expect(text.contains(accessID) && text.contains(Redaction.placeholder), "the rest is shown: \(text)")
        }
        #expect("\(key)".hasPrefix("HmacKey {"), "\(key)")
    }

    /// Google's own words: every string field the Storage Discovery document (the one the
    /// generated client is built from) describes as a secret, a password, a private key or a
    /// passphrase is a name the scanner hides; the fields that are plainly not are kept.
    @Test func theFieldsStoragesDocumentCallsSecretAreHidden() throws {
        let url = Repository.path("Sources/GoogleStorage/discovery.json")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let schemas = try #require(document["schemas"] as? [String: [String: Any]])
        let words = /(?i)\b(secret|password|private key|passphrase)\b/
        var described: [String] = []
        func walk(_ properties: [String: Any]?, _ path: String) {
            for (name, value) in properties ?? [:] {
                guard let property = value as? [String: Any] else { continue }
                if property["type"] as? String == "string", let text = property["description"] as? String,
                   text.contains(words) {
                    described.append("\(path).\(name)")
                    #expect(Redaction.isSecret(name), "\(path).\(name): \(text)")
                }
                walk(property["properties"] as? [String: Any], "\(path).\(name)")
                walk((property["items"] as? [String: Any])?["properties"] as? [String: Any], "\(path).\(name)[]")
            }
        }
        for (name, schema) in schemas { walk(schema["properties"] as? [String: Any], name) }
        #expect(described == ["HmacKey.secret"], "the document changed: \(described)")
        for name in ["accessId", "serviceAccountEmail", "etag", "selfLink", "kmsKeyName", "name", "data", "nextPageToken"] {
            #expect(!Redaction.isSecret(name), "\(name) is no secret")
        }
    }

    /// The parameters every Google API takes, as the Storage document lists them: those it
    /// describes as a token or an API key (`oauth_token`, `key`) are hidden,
    /// the rest (`alt`, `fields`, `quotaUser`, …) are shown. `oauth_token` was shown before.
    /// The cursors its methods take and return stay shown too.
    @Test func theStandardParametersThatCarryCredentialsAreHidden() throws {
        let url = Repository.path("Sources/GoogleStorage/discovery.json")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let parameters = try #require(document["parameters"] as? [String: [String: Any]])
        let credential = /(?i)\b(token|api key)\b/
        var hidden: [String] = []
        for (name, parameter) in parameters {
            let described = (parameter["description"] as? String)?.contains(credential) ?? false
            #expect(Redaction.isSecret(name) == described, "\(name): \(parameter["description"] ?? "")")
            if described { hidden.append(name) }
        }
        #expect(hidden.sorted() == ["key", "oauth_token"], "the document changed: \(hidden)")
        for cursor in ["pageToken", "nextPageToken", "rewriteToken", "restoreToken"] {
            #expect(!Redaction.isSecret(cursor), "\(cursor) is a cursor")
        }
    }
}
