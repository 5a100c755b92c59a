import Courier
import Foundation
import FuzzDriver

// Any input parses or throws JSONParsingError (within the depth and size limits); whatever
// parses serializes and parses back to the same value, and is read as a credentials file:
// read or refused with a typed error, never a trap, and no secret it holds shown.

/// Where an input goes as `GOOGLE_APPLICATION_CREDENTIALS`: one file per process, rewritten.
let credentialsFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fuzz-credentials-\(getpid()).json")
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    guard let value = try? JSONValue(parsing: data, limits: JSONLimits(maxDepth: 64, maxBytes: 1 << 20)) else { return 0 }
    let again = try? JSONValue(parsing: value.serialized())
    precondition(again == value, "serialize/parse round trip changed the value")
    // What the HTTP log and an object's description print: every secret member's value replaced,
    // whatever the nesting, and redacting twice the same as once.
    let redacted = Redaction.json(value)
    checkRedacted(redacted, parent: nil)
    precondition(Redaction.json(redacted) == redacted, "redacting twice changed the value")
    // Files users hand the SDK as JSON: a workload identity federation configuration (every
    // subject-token source, executables allowed) and an OAuth client's client_secret.json.
    // Each is read or refused with a typed error; nothing may trap.
    if value.objectValue != nil {
        // What each read shows (its result's description, or its error's): none may show a
        // secret the file holds (``secrets(in:)``).
        let secrets = secrets(in: value)
        func shows(_ outcome: () throws -> Any) -> [String] {
            do {
                let result = try outcome()
                return [String(describing: result), String(reflecting: result)]
            } catch {
                return [String(describing: error), String(reflecting: error)]
            }
        }
        var shown = shows { try ExternalAccountAuthorizer.Configuration(json: data, environment: ["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"]) }
        shown += shows { try OAuthClient(json: data) }
        shown += shows { try ServiceAccountKey(json: data) }
        // Every type of credentials file, as Application Default Credentials read it from disk:
        // service accounts (their PEM keys), users, GDCH (an EC key), impersonation (nested
        // sources), workforce users. An authorizer is only made; nothing is fetched.
        if (try? data.write(to: credentialsFile)) != nil {
            let environment = ["GOOGLE_APPLICATION_CREDENTIALS": credentialsFile.path, "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"]
            shown += shows { try ApplicationDefaultCredentials.authorizer(scopes: ["s"], gdchAudience: "https://a", environment: environment) }
            shown += shows { try ApplicationDefaultCredentials.idTokenAuthorizer(audience: "https://a", environment: environment) }
        }
        for text in shown {
            for secret in secrets where text.lowercased().contains(secret) {
                fatalError("a credentials file's secret (\(secret.count) characters) is shown: \(text.prefix(300))")
            }
        }
    }
    return 0
}

/// The keys whose values are secrets in Google's credentials and client files, at any depth.
private let secretKeys: Set<String> = ["private_key", "client_secret", "refresh_token"]

/// What of `value`'s secrets no error or description may contain, lower-cased: the test mark
/// `s3kr1t` (Scripts/secret-scan.sh) when a secret carries it, and each line of 40 characters or
/// more of a PEM key (its base64). Either only when no other string in the file, name or value,
/// holds it too: an input may put the same text where showing it is fine (a `type`, a path).
private func secrets(in value: JSONValue) -> [String] {
    var secret: [String] = []
    var other: [String] = []
    func walk(_ value: JSONValue, key: String?) {
        if let object = value.objectValue {
            for (name, member) in object {
                other.append(name.lowercased())
                walk(member, key: name)
            }
        } else if let array = value.arrayValue {
            for element in array { walk(element, key: nil) }
        } else if let text = value.stringValue {
            if let key, secretKeys.contains(key) { secret.append(text.lowercased()) } else { other.append(text.lowercased()) }
        }
    }
    walk(value, key: nil)
    var candidates: [String] = []
    if secret.contains(where: { $0.contains("s3kr1t") }) { candidates.append("s3kr1t") }
    for text in secret where text.contains("-----begin") {
        candidates += text.split(whereSeparator: \.isNewline).map(String.init).filter { $0.count >= 40 && !$0.contains("-----") }
    }
    return candidates.filter { candidate in !other.contains { $0.contains(candidate) } && !credentialsFile.path.lowercased().contains(candidate) }
}

@_cdecl("FuzzJSON_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    atexit { _ = unlink(credentialsFile.path) } // libFuzzer ends with exit()
    return runFuzzer(argc, argv) { fuzz($0, $1) }
}

/// Every member of `value` whose name is secret (in its parent) holds the placeholder, unless it
/// is a number, a boolean or null, which the redaction keeps.
private func checkRedacted(_ value: JSONValue, parent: String?) {
    if let object = value.objectValue {
        for (name, member) in object {
            switch member {
            case .number, .bool, .null: continue
            default:
                if Redaction.isSecret(name, in: parent) {
                    precondition(member == .string(Redaction.placeholder), "a secret member was printed: \(name)")
                } else {
                    checkRedacted(member, parent: name)
                }
            }
        }
    } else if let array = value.arrayValue {
        for element in array { checkRedacted(element, parent: parent) }
    }
}
