@testable import Courier
import CourierTestServer
import CourierTesting
import CourierTestSupport
import Foundation
import Testing

/// `gdch_service_account` end to end: an ES256 JWT, exchanged at the test server's GDCH identity
/// service behind nginx over TLS whose CA only the credentials file names.
@Suite struct GDCHTests {
    /// A key pair made now, registered with the fake, and a credentials file naming `tokenURL`.
    static func account(_ server: TestServer, tokenURL: String, caPath: String?, formatVersion: String = "1") throws -> URL {
        let pair = try #require(ECPrivateKey.generatePEM())
        // The suite's secret scan fails if any line of the key reaches a log.
        for line in pair.privateKey.split(separator: "\n") where !line.hasPrefix("-----") { SuiteLog.registerSecret(String(line)) }
        try server.tokens.gdch.register(project: "gdch-project", name: "robot", keyID: "key-1", publicKeyPEM: pair.publicKey, tokenURL: tokenURL)
        var object: [String: Any] = ["type": "gdch_service_account", "format_version": formatVersion, "project": "gdch-project",
                                     "name": "robot", "private_key_id": "key-1", "private_key": pair.privateKey, "token_uri": tokenURL]
        if let caPath { object["ca_cert_path"] = caPath }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gdch-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        return file
    }

    @Test func tokensComeFromTheIdentityServiceOverTLSWithTheFilesCA() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            try await withNginxTLS(proxying: server.baseURL) { peer in
                let tokenURL = peer.url(host: "localhost", path: "/gdch/authenticate").absoluteString
                let file = try Self.account(server, tokenURL: tokenURL, caPath: peer.caPath)
                defer { try? FileManager.default.removeItem(at: file) }
                let authorizer = try ApplicationDefaultCredentials.authorizer(
                    scopes: [], gdchAudience: "https://notes.gdch.example", environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
                #expect(authorizer is GDCHServiceAccountAuthorizer)
                #expect("\(authorizer)" == "GDCHServiceAccountAuthorizer(system:serviceaccount:gdch-project:robot)")
                var configuration = ServiceActor.Configuration.testing(server.baseURL)
                configuration.auth.authorizer = authorizer
                try await withCheckedService(configuration: configuration) { service in
                    _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                }
                #expect(server.tokens.gdch.exchangeCount == 1 && server.tokens.gdch.lastAudience == "https://notes.gdch.example")
                #expect(try peer.accessLog().contains { $0.hasSuffix("/gdch/authenticate") }) // it went through nginx, over TLS
            }
        }
    }

    @Test func withoutTheFilesCATheIdentityServiceIsNotTrusted() async throws {
        try await withTestServer { server in
            try await withNginxTLS(proxying: server.baseURL) { peer in
                let file = try Self.account(server, tokenURL: peer.url(host: "localhost", path: "/gdch/authenticate").absoluteString, caPath: nil)
                defer { try? FileManager.default.removeItem(at: file) }
                let authorizer = try GDCHServiceAccountAuthorizer(keyFile: file, audience: "https://notes.gdch.example")
                let error = await #expect(throws: AuthError.transport) { try await authorizer.currentToken() }
                #expect((error?.underlyingError as? TransportError) == .tlsFailure)
                #expect(server.tokens.gdch.exchangeCount == 0)
            }
        }
    }

    @Test func aJWTSignedByAnotherKeyIsRefused() async throws {
        try await withTestServer { server in
            let tokenURL = server.url("/gdch/authenticate").absoluteString
            let file = try Self.account(server, tokenURL: tokenURL, caPath: nil)
            // The fake now knows another key for the same account.
            let other = try Self.account(server, tokenURL: tokenURL, caPath: nil)
            defer { for url in [file, other] { try? FileManager.default.removeItem(at: url) } }
            await #expect(throws: AuthError.invalidGrant) {
                try await GDCHServiceAccountAuthorizer(keyFile: file, audience: "a").currentToken()
            }
            #expect(server.tokens.gdch.refusedCount == 1)
        }
    }

    @Test func whatCannotMakeTokensIsRefusedAsItIsRead() async throws {
        try await withTestServer { server in
            let tokenURL = server.url("/gdch/authenticate").absoluteString
            let file = try Self.account(server, tokenURL: tokenURL, caPath: nil)
            let future = try Self.account(server, tokenURL: tokenURL, caPath: nil, formatVersion: "2")
            defer { for url in [file, future] { try? FileManager.default.removeItem(at: url) } }
            let environment = ["GOOGLE_APPLICATION_CREDENTIALS": file.path]
            // No audience: ADC cannot say what the tokens are for.
            #expect(throws: AuthError.invalidCredentials) { try ApplicationDefaultCredentials.authorizer(scopes: [], environment: environment) }
            #expect(throws: AuthError.invalidCredentials) {
                try ApplicationDefaultCredentials.authorizer(scopes: [], gdchAudience: "a", environment: ["GOOGLE_APPLICATION_CREDENTIALS": future.path])
            }
            #expect(throws: AuthError.unsupportedCredentials) { try ApplicationDefaultCredentials.idTokenAuthorizer(audience: "a", environment: environment) }
            // An RSA key where a P-256 one belongs.
            let rsa = try #require(RSAPrivateKey.generatePEM(bits: 2048))
            #expect(throws: AuthError.invalidCredentials) {
                try GDCHServiceAccountAuthorizer.Key(object: ["format_version": "1", "project": "p", "name": "n", "private_key_id": "k",
                                                              "private_key": .string(rsa.privateKey), "token_uri": "https://x/authenticate"])
            }
        }
    }
}
