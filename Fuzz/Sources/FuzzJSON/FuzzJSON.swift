import Courier
import Foundation
import FuzzDriver

// Any input parses or throws JSONParsingError (within the depth and size limits); whatever
// parses serializes and parses back to the same value, and is read as a credentials file.

/// Where an input goes as `GOOGLE_APPLICATION_CREDENTIALS`: one file per process, rewritten.
let credentialsFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fuzz-credentials-\(getpid()).json")
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: start, count: count)
    guard let value = try? JSONValue(parsing: data, limits: JSONLimits(maxDepth: 64, maxBytes: 1 << 20)) else { return 0 }
    let again = try? JSONValue(parsing: value.serialized())
    precondition(again == value, "serialize/parse round trip changed the value")
    // Files users hand the SDK as JSON: a workload identity federation configuration (every
    // subject-token source, executables allowed) and an OAuth client's client_secret.json.
    // Each is read or refused with a typed error; nothing may trap.
    if value.objectValue != nil {
        _ = try? ExternalAccountAuthorizer.Configuration(json: data, environment: ["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"])
        _ = try? OAuthClient(json: data)
        // Every type of credentials file, as Application Default Credentials read it from disk:
        // service accounts (their PEM keys), users, GDCH (an EC key), impersonation (nested
        // sources), workforce users. An authorizer is only made; nothing is fetched.
        if (try? data.write(to: credentialsFile)) != nil {
            let environment = ["GOOGLE_APPLICATION_CREDENTIALS": credentialsFile.path, "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"]
            _ = try? ApplicationDefaultCredentials.authorizer(scopes: ["s"], gdchAudience: "https://a", environment: environment)
            _ = try? ApplicationDefaultCredentials.idTokenAuthorizer(audience: "https://a", environment: environment)
        }
    }
    return 0
}

@_cdecl("FuzzJSON_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    atexit { _ = unlink(credentialsFile.path) } // libFuzzer ends with exit()
    return runFuzzer(argc, argv) { fuzz($0, $1) }
}
