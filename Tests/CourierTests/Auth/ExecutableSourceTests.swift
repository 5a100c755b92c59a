@testable import Courier
import CourierTestServer
import CourierTesting
import CourierTestSupport
import Foundation
import Testing

/// Executable-sourced workload identity federation, against real programs (shell scripts) and
/// the test server's STS: the response format, the timeout, the output file's cache, and the
/// environment variable that must allow it.
@Suite struct ExecutableSourceTests {
    /// A folder with `source.sh` (the script's body), a credentials file naming it, and the environment ADC sees.
    struct Setup {
        let folder: URL
        let environment: [String: String]
        var counter: URL { folder.appendingPathComponent("runs") }
        var outputFile: URL { folder.appendingPathComponent("cache.json") }
        var runs: Int { ((try? String(contentsOf: counter, encoding: .utf8)) ?? "").split(separator: "\n").count }

        init(_ server: TestServer, script: String, timeoutMillis: Int = 5_000, outputFile: Bool = false, allowed: Bool = true) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("executable-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("source.sh")
            try writeExecutable("#!/bin/sh\necho run >> '\(folder.path)/runs'\n\(script)\n", to: path)
            var executable: [String: Any] = ["command": "\(path.path) --flag", "timeout_millis": timeoutMillis]
            if outputFile { executable["output_file"] = folder.appendingPathComponent("cache.json").path }
            let credentials = folder.appendingPathComponent("credentials.json")
            try JSONSerialization.data(withJSONObject: [
                "type": "external_account", "audience": server.sts.audience,
                "subject_token_type": "urn:ietf:params:oauth:token-type:id_token", "token_url": server.url("/sts/v1/token").absoluteString,
                "credential_source": ["executable": executable],
            ]).write(to: credentials)
            environment = ["GOOGLE_APPLICATION_CREDENTIALS": credentials.path] + (allowed ? ["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"] : [:])
        }

        func authorizer() throws -> any TokenAuthorizer {
            try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"], environment: environment)
        }
    }

    static func success(_ token: String, expires: Double = Date().timeIntervalSince1970 + 3600) -> String {
        #"{"version": 1, "success": true, "token_type": "urn:ietf:params:oauth:token-type:id_token", "id_token": "\#(token)", "expiration_time": \#(Int(expires))}"#
    }

    @Test func aProgramThatPrintsATokenIsExchangedAtSTSAndToldWhatFor() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let token = server.sts.issueSubjectToken()
            let setup = try Setup(server, script: """
                env | grep '^GOOGLE_EXTERNAL_ACCOUNT_' | sort > "$(dirname "$0")/environment"
                echo "$1" > "$(dirname "$0")/arguments"
                echo '\(Self.success(token))'
                """)
            defer { try? FileManager.default.removeItem(at: setup.folder) }
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = try setup.authorizer()
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.sts.exchangeCount == 1 && setup.runs == 1)
            let environment = try String(contentsOf: setup.folder.appendingPathComponent("environment"), encoding: .utf8)
            #expect(environment.contains("GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE=\(server.sts.audience)\n"))
            #expect(environment.contains("GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE=urn:ietf:params:oauth:token-type:id_token\n"))
            #expect(environment.contains("GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE=0\n"))
            #expect(!environment.contains("GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE")) // none configured
            #expect(try String(contentsOf: setup.folder.appendingPathComponent("arguments"), encoding: .utf8) == "--flag\n")
        }
    }

    @Test func theOutputFileIsUsedUntilItsAnswerExpires() async throws {
        try await withTestServer { server in
            let token = server.sts.issueSubjectToken()
            // The program writes its answer to the file it is told, and prints nothing.
            let setup = try Setup(server, script: #"echo '\#(Self.success(token))' > "$GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE""#, outputFile: true)
            defer { try? FileManager.default.removeItem(at: setup.folder) }
            let authorizer = try setup.authorizer()
            let first = try await authorizer.currentToken()
            #expect(setup.runs == 1)
            await authorizer.invalidateToken(first.value)
            let second = try await authorizer.currentToken()
            #expect(second.value != first.value && server.sts.exchangeCount == 2)
            #expect(setup.runs == 1) // the second exchange read the cached answer

            try Data(Self.success(token, expires: Date().timeIntervalSince1970 - 10).utf8).write(to: setup.outputFile)
            await authorizer.invalidateToken(second.value)
            _ = try await authorizer.currentToken()
            #expect(setup.runs == 2 && server.sts.exchangeCount == 3) // expired: the program ran again
        }
    }

    @Test(arguments: [
        ("sleep 30", "did not finish within 5.0 s"),
        (#"echo '{"version": 1, "success": false, "code": "401", "message": "Caller not authorized."}'"#, "code 401, Caller not authorized."),
        ("echo 'SECRET-s3kr1t in a failure'; exit 3", "exited with status 3"),
        (#"echo '{"version": 2, "success": true}'"#, "version 2"),
        (#"echo '{"version": 1, "success": true, "token_type": "urn:ietf:params:oauth:token-type:id_token", "id_token": "t", "expiration_time": 1}'"#, "expired"),
        ("echo not json", "JSON object"),
    ])
    func aFailingProgramIsATypedErrorWithItsReason(script: String, reason: String) async throws {
        try await withTestServer { server in
            let setup = try Setup(server, script: script)
            defer { try? FileManager.default.removeItem(at: setup.folder) }
            do {
                _ = try await setup.authorizer().currentToken()
                Issue.record("no error")
            } catch let error as AuthError {
                #expect(error == .subjectTokenSource)
                #expect(error.message.contains(reason), "\(error)")
                #expect(!"\(error)".contains("s3kr1t"))
            }
            #expect(server.sts.requestCount == 0 && setup.runs == 1)
        }
    }

    @Test func withoutTheEnvironmentsPermissionNothingRuns() async throws {
        try await withTestServer { server in
            let setup = try Setup(server, script: "echo '\(Self.success(server.sts.issueSubjectToken()))'", allowed: false)
            defer { try? FileManager.default.removeItem(at: setup.folder) }
            await #expect(throws: AuthError.invalidCredentials) { _ = try await setup.authorizer().currentToken() }
            #expect(setup.runs == 0)
        }
    }

    @Test(arguments: [[:], ["timeout_millis": 4_999], ["command": "x", "timeout_millis": 120_001], ["command": "  "]] as [[String: JSONValue]])
    func aMalformedExecutableIsRefusedAsItIsRead(object: [String: JSONValue]) {
        var json = JSONObject()
        for (name, value) in object { json[name] = value }
        #expect(throws: AuthError.invalidCredentials) { try ExecutableSubjectToken(json, environment: [:]) }
    }
}

private func + (lhs: [String: String], rhs: [String: String]) -> [String: String] { lhs.merging(rhs) { $1 } }
