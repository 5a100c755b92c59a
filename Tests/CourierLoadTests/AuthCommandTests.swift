import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `courier auth login`, then any program with Application Default Credentials, as a user runs
/// them: the binary, a temporary HOME, the test server as Google's authorization server.
@Suite struct AuthCommandTests {
    static var courier: URL { LoadCommandTests.courier }

    /// A temporary HOME with no other credentials, and a client_secret.json for the test server.
    static func setUp(_ server: TestServer) throws -> (home: URL, clientFile: URL, environment: [String: String?]) {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("auth-home-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        server.tokens.registerClient(id: "tool.apps.example.com", secret: "TOOL-s3kr1t", refreshToken: "unused-s3kr1t")
        let client = home.appendingPathComponent("client_secret.json")
        try Data("""
            {"installed": {"client_id": "tool.apps.example.com", "client_secret": "TOOL-s3kr1t",
              "auth_uri": "\(server.url("/o/oauth2/v2/auth"))", "token_uri": "\(server.url("/token"))",
              "device_authorization_uri": "\(server.url("/device/code"))", "redirect_uris": ["http://localhost"]}}
            """.utf8).write(to: client)
        return (home, client, ["HOME": home.path, "CLOUDSDK_CONFIG": nil, "GOOGLE_APPLICATION_CREDENTIALS": nil,
                               "GCE_METADATA_HOST": "127.0.0.1:9", "DISPLAY": nil, "WAYLAND_DISPLAY": nil, "BROWSER": nil])
    }

    /// The saved file is gcloud's, readable by its owner only; a later program's token reaches the API.
    static func expectSignedIn(home: URL, environment: [String: String?], server: TestServer) async throws {
        let file = home.appendingPathComponent(".config/gcloud/application_default_credentials.json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: String])
        #expect(object["type"] == "authorized_user" && object["client_id"] == "tool.apps.example.com")
        #expect(object["refresh_token"]?.isEmpty == false && object["token_uri"] == server.url("/token").absoluteString)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)

        // Not recorded in the suite's log: printing the token is the command's whole point, and
        // the secret scan rightly fails on a token in a log.
        let print = try await runProcess(courier, ["auth", "print-access-token"], timeout: 60, record: false, environment: environment)
        #expect(print.status == 0, "\(print.error)")
        let token = String(decoding: print.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        server.notes.seed(count: 1)
        let status = try await withCheckedService(configuration: .init()) { service async throws -> Int in
            var request = HTTPRequest(method: .get, url: server.url("/protected/notes/v1/notes/note-0001"))
            request.headers["Authorization"] = "Bearer \(token)"
            return try await service.send(request).status
        }
        #expect(status == 200)
    }

    @Test func loginWithADeviceCodeThenAnyProgramUsesIt() async throws {
        try await withTestServer { server in
            let (home, client, environment) = try Self.setUp(server)
            defer { try? FileManager.default.removeItem(at: home) }
            server.tokens.signIn.deviceInterval = 1
            server.tokens.signIn.scriptDevicePolls(.pending, .approve)
            let login = try await runProcess(Self.courier, ["auth", "login", "--client-secret", client.path, "--scopes", "notes.read,notes.write",
                                                            "--no-browser"], timeout: 120, environment: environment)
            #expect(login.status == 0, "\(login.error)")
            #expect(login.error.contains("/device and enter the code CRUX-TEST"), "\(login.error)")
            #expect(!login.error.contains("s3kr1t") && login.output.isEmpty)
            #expect(server.tokens.signIn.devicePollCount == 2)
            try await Self.expectSignedIn(home: home, environment: environment, server: server)
        }
    }

    @Test func loginInTheBrowserNamedByBROWSER() async throws {
        try await withTestServer { server in
            let (home, client, environment) = try Self.setUp(server)
            defer { try? FileManager.default.removeItem(at: home) }
            // $BROWSER starts headless Chromium in the background, as a desktop browser opens a tab and returns.
            let browser = try Chromium.binary() // before the folder: a missing browser leaves none behind
            let profile = try Chromium.makeFolder()
            let script = home.appendingPathComponent("browser.sh")
            try writeExecutable("""
                #!/bin/sh
                TMPDIR='\(profile.path)' '\(browser)' \(Chromium.arguments(profile: profile).map { "'\($0)'" }.joined(separator: " ")) "$1" >/dev/null 2>&1 &
                echo $! > '\(home.path)/browser.pid'
                """, to: script)
            var withBrowser = environment
            withBrowser["BROWSER"] = script.path
            let login = try await Chromium.oneAtATime {
                let login = try await runProcess(Self.courier, ["auth", "login", "--client-secret", client.path, "--scopes", "notes.read"],
                                                 timeout: 120, environment: withBrowser)
                if let pid = (try? String(contentsOf: home.appendingPathComponent("browser.pid"), encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                    kill(pid, SIGTERM)
                    // Ended before the next browser starts (one at a time) and before its profile is removed.
                    #expect(await waitUntilEnded(pid))
                }
                return login
            }
            await Chromium.removeFolder(profile)
            #expect(login.status == 0, "\(login.error)")
            #expect(login.error.contains("Sign in with your browser: \(server.url("/o/oauth2/v2/auth"))?"), "\(login.error)")
            #expect(server.tokens.signIn.codeExchanges == 1)
            try await Self.expectSignedIn(home: home, environment: environment, server: server)
        }
    }

    @Test func aMissingOrBrokenClientFileIsRefusedWithItsReason() async throws {
        try await withTestServer { server in
            let (home, _, environment) = try Self.setUp(server)
            defer { try? FileManager.default.removeItem(at: home) }
            let broken = home.appendingPathComponent("broken.json")
            try Data(#"{"installed": {"client_secret": "x"}}"#.utf8).write(to: broken)
            for (file, reason) in [(home.appendingPathComponent("missing.json").path, "cannot read"), (broken.path, "no client_id")] {
                let run = try await runProcess(Self.courier, ["auth", "login", "--client-secret", file], timeout: 60, environment: environment)
                #expect(run.status != 0 && run.error.contains(reason), "\(run.error)")
            }
            #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent(".config/gcloud").path))
        }
    }
}
