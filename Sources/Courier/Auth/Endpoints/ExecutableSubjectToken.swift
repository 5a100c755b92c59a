import Foundation

/// A subject token printed by a program (`credential_source.executable`), as Google's libraries
/// run it: only when `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1`, with a timeout (5–120 s,
/// 30 s by default), and with an optional output file that caches the answer until its
/// `expiration_time`.
///
/// The program gets `GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE`, `…_TOKEN_TYPE`, `…_INTERACTIVE=0`,
/// `…_OUTPUT_FILE` and, with impersonation, `…_IMPERSONATED_EMAIL`, and prints:
///
/// ```json
/// {"version": 1, "success": true, "token_type": "urn:ietf:params:oauth:token-type:id_token",
///  "id_token": "…", "expiration_time": 1700000000}
/// {"version": 1, "success": false, "code": "401", "message": "Caller not authorized."}
/// ```
public struct ExecutableSubjectToken: Sendable, Hashable {
    /// The program and its arguments, split at spaces.
    public var command: String
    public var timeout: Duration
    public var outputFile: String?
    /// Whether the environment allowed executables when the credentials were read.
    public var allowed: Bool

    init(_ object: JSONObject, environment: [String: String]) throws(AuthError) {
        guard let command = object["command"]?.stringValue, !command.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw AuthError(.invalidCredentials, message: "credential_source.executable lacks its command")
        }
        let milliseconds = object["timeout_millis"]?.doubleValue ?? 30_000
        guard (5_000...120_000).contains(milliseconds) else {
            throw AuthError(.invalidCredentials, message: "credential_source.executable.timeout_millis must be between 5 and 120 seconds")
        }
        self.command = command
        timeout = .milliseconds(Int64(milliseconds))
        outputFile = object["output_file"]?.stringValue
        allowed = environment["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"] == "1"
    }

    /// The token: from the output file while its answer is unexpired, else from a run of the program.
    func read(audience: String, tokenType: String, impersonatedEmail: String?, now: Date = Date()) async throws(AuthError) -> String {
        guard allowed else {
            throw AuthError(.invalidCredentials, message: "executables must be allowed explicitly: set GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1")
        }
        if let outputFile, let data = FileManager.default.contents(atPath: outputFile),
           let cached = (try? JSONValue(parsing: data))?.objectValue, cached["expiration_time"] != nil,
           let token = try? Self.token(in: cached, now: now)
        {
            return token
        }
        var environment = ["GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE": audience, "GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE": tokenType,
                           "GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE": "0", "GOOGLE_EXTERNAL_ACCOUNT_REVOKE": "0"]
        if let impersonatedEmail { environment["GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL"] = impersonatedEmail }
        if let outputFile { environment["GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE"] = outputFile }
        let arguments = command.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let program = arguments.first ?? command
        let outcome = try await ChildProcess.run(arguments, environment: environment, timeout: timeout)
        guard let status = outcome.status else {
            throw AuthError(.subjectTokenSource, message: "\(program) did not finish within \(timeout.seconds) s")
        }
        guard status == 0 else {
            // Its output is not repeated: a failing program may have printed a secret.
            throw AuthError(.subjectTokenSource, message: "\(program) exited with status \(status)")
        }
        var answer = outcome.output
        if answer.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }), let outputFile,
           let written = FileManager.default.contents(atPath: outputFile) {
            answer = written
        }
        guard let object = (try? JSONValue(parsing: answer))?.objectValue else {
            throw AuthError(.subjectTokenSource, message: "\(program) did not print a JSON object")
        }
        return try Self.token(in: object, now: now)
    }

    /// The token of an executable's answer, or the error it reports (the response format of
    /// Google's executable-sourced credentials, version 1).
    static func token(in response: JSONObject, now: Date) throws(AuthError) -> String {
        guard let version = response["version"]?.doubleValue else {
            throw AuthError(.subjectTokenSource, message: "the executable's response lacks its version")
        }
        guard version <= 1 else { throw AuthError(.subjectTokenSource, message: "the executable's response has version \(version); 1 is supported") }
        guard let success = response["success"]?.boolValue else {
            throw AuthError(.subjectTokenSource, message: "the executable's response lacks success")
        }
        guard success else {
            // A code may be a string or a number: shown as written, never narrowed.
            guard let code = response["code"]?.stringValue ?? response["code"].map({ String(decoding: $0.serialized(), as: UTF8.self) }),
                  let message = response["message"]?.stringValue
            else { throw AuthError(.subjectTokenSource, message: "the executable failed without code and message") }
            throw AuthError(.subjectTokenSource, message: "the executable failed: code \(code), \(message)", oauthError: code)
        }
        if let expiration = response["expiration_time"]?.doubleValue, expiration < now.timeIntervalSince1970 {
            throw AuthError(.subjectTokenSource, message: "the token the executable returned has expired")
        }
        let field: String
        switch response["token_type"]?.stringValue {
        case "urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token": field = "id_token"
        case "urn:ietf:params:oauth:token-type:saml2": field = "saml_response"
        case nil: throw AuthError(.subjectTokenSource, message: "the executable's response lacks token_type")
        case let other?: throw AuthError(.subjectTokenSource, message: "the executable returned an unsupported token_type \(other)")
        }
        guard let token = response[field]?.stringValue, !token.isEmpty else {
            throw AuthError(.subjectTokenSource, message: "the executable's response lacks \(field)")
        }
        return token
    }
}
