@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import Foundation
import Logging
import Synchronization
import CourierTestSupport
import Testing

/// A wall clock tests can move forward.
final class MovableNow: Sendable {
    private let offset = LockedValue<TimeInterval>(0)
    func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    var now: @Sendable () -> Date { { Date().addingTimeInterval(self.offset.withLock { $0 }) } }
}

enum AuthFixtures {
    static let clientID = "client-123.apps.example.com"
    static let clientSecret = "CLIENT-s3kr1t-xyz"
    static let refreshToken = "REFRESH-s3kr1t-abc"

    /// A service account with a key pair made now: no private key is committed.
    static func serviceAccount(registeredWith server: TestServer, email: String = "robot@project.iam.example.com")
        throws -> (file: URL, json: Data, privateKey: String)
    {
        let account = try TestServiceAccount(email: email, tokenURL: server.url("/token"), keyPair: .sharedInProcess)
        try server.tokens.registerServiceAccount(email: email, publicKeyPEM: account.publicKeyPEM)
        let file = try account.writeKeyFile(to: FileManager.default.temporaryDirectory.appendingPathComponent("sa-\(UUID()).json"))
        let object = try JSONSerialization.jsonObject(with: account.keyFileJSON) as? [String: Any]
        let privateKey = try #require(object?["private_key"] as? String)
        for line in privateKey.split(separator: "\n") where !line.hasPrefix("-----") {
            SuiteLog.registerSecret(String(line))
        }
        return (file, account.keyFileJSON, privateKey)
    }

    static func protectedNote(_ id: String) -> Query<Note> {
        Query(api: TestAPIs.notes, name: "notes.notes.get", path: "/protected/notes/v1/notes/{id}", pathParameters: ["id": id])
    }

    static func refreshAuthorizer(_ server: TestServer, refreshToken: String = refreshToken, now: MovableNow = MovableNow(),
                                  store: (any TokenStore)? = nil) throws -> OAuth2RefreshTokenAuthorizer {
        try OAuth2RefreshTokenAuthorizer(clientID: clientID, clientSecret: clientSecret, refreshToken: refreshToken,
                                         scopes: ["notes.read"], tokenURL: server.url("/token"), refresh: TokenRefresh(refreshBefore: .seconds(30), expireBefore: .seconds(30), background: false),
                                         store: store, now: now.now)
    }
}

@Suite struct ServiceAccountTests {
    @Test func theServerAcceptsTheSignedJWT() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let account = try AuthFixtures.serviceAccount(registeredWith: server)
            defer { try? FileManager.default.removeItem(at: account.file) }
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = try ServiceAccountAuthorizer(keyFile: account.file, scopes: ["notes.read", "notes.write"])
            try await withCheckedService(configuration: configuration) { service in
                let note = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                #expect(note.id == "note-0001")
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.tokens.jwtCount == 1) // cached for the second query
            #expect(server.tokens.lastScope == "notes.read notes.write")
        }
    }

    @Test func aJWTSignedWithAnotherKeyIsRejected() async throws {
        try await withTestServer { server in
            let account = try AuthFixtures.serviceAccount(registeredWith: server)
            defer { try? FileManager.default.removeItem(at: account.file) }
            let impostor = try #require(RSAPrivateKey.generatePEM())
            var object = try #require(try JSONSerialization.jsonObject(with: account.json) as? [String: Any])
            object["private_key"] = impostor.privateKey
            let key = try ServiceAccountKey(json: try JSONSerialization.data(withJSONObject: object))
            let authorizer = try ServiceAccountAuthorizer(key: key, scopes: ["notes.read"])
            let error = await #expect(throws: AuthError.self) { try await authorizer.currentToken() }
            #expect(error == .invalidGrant)
            #expect(error?.message.contains("Signature") == true)
        }
    }

    @Test func malformedKeyFilesAreTypedErrors() throws {
        #expect(throws: AuthError.invalidCredentials) { try ServiceAccountKey(json: Data("{}".utf8)) }
        #expect(throws: AuthError.invalidCredentials) {
            try ServiceAccountKey(json: Data(#"{"type":"service_account","client_email":"a@b","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}"#.utf8))
        }
        #expect(throws: AuthError.invalidCredentials) { try ServiceAccountKey(contentsOf: URL(fileURLWithPath: "/nonexistent.json")) }
    }
}

@Suite struct RefreshTokenTests {
    @Test func expiredTokenCausesExactlyOneRefreshForAThousandConcurrentQueries() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            let clock = MovableNow()
            let authorizer = try AuthFixtures.refreshAuthorizer(server, now: clock)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = authorizer
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                #expect(server.tokens.refreshCount == 1)
                clock.advance(by: 7200) // the cached token is now past its expiry
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<1000 {
                        group.addTask { _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) }
                    }
                    try await group.waitForAll()
                }
                #expect(server.tokens.refreshCount == 2)
            }
        }
    }

    @Test func a401LeadsToOneRefreshAndOneRetry() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = try AuthFixtures.refreshAuthorizer(server)
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                let before = server.counters.requests
                server.tokens.expireAllTokens() // revoked on the server while the client still trusts it
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                #expect(server.tokens.refreshCount == 2)
                #expect(server.counters.requests - before == 1 + 1 + 1) // 401, token, retry

                // Many concurrent 401s for the same stale token still cause one refresh.
                server.tokens.expireAllTokens()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<100 { group.addTask { _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) } }
                    try await group.waitForAll()
                }
                #expect(server.tokens.refreshCount == 3)
            }
        }
    }

    @Test func invalidGrantIsItsOwnTypedError() async throws {
        try await withTestServer { server in
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            let revoked = try AuthFixtures.refreshAuthorizer(server, refreshToken: "REVOKED-TOKEN")
            let error = await #expect(throws: AuthError.self) { try await revoked.currentToken() }
            #expect(error == .invalidGrant)
            #expect(error?.oauthError == "invalid_grant")
            #expect(error?.isTransient == false)

            // Token requests go through a service and keep its retry rules: without retries a
            // 500 is a typed, transient error; with them (the default) it is waited out.
            let good = try AuthFixtures.refreshAuthorizer(server)
            var once = ServiceActor.Configuration.suite()
            once.retry = .disabled
            try await withCheckedService(configuration: once) { service async throws in
                server.tokens.failNext(.serverError)
                let serverError = await #expect(throws: AuthError.self) { try await good.currentToken(through: service) }
                #expect(serverError == .tokenEndpoint)
                #expect(serverError?.status == 500)
                #expect(serverError?.isTransient == true)
                let value1 = try await good.currentToken(through: service).value
                #expect(value1.hasPrefix("ya29.")) // the next attempt works
            }
            var retrying = ServiceActor.Configuration.suite()
            retrying.retry = RetryPolicy(maxRetries: 2, initialDelay: 0.01...0.02)
            try await withCheckedService(configuration: retrying) { service async throws in
                let fresh = try AuthFixtures.refreshAuthorizer(server)
                server.tokens.failNext(.serverError)
                let grantsBefore = server.tokens.requestCount
                let value2 = try await fresh.currentToken(through: service).value
                #expect(value2.hasPrefix("ya29."))
                #expect(server.tokens.requestCount == grantsBefore + 2) // the 500, then the retry

                // invalid_grant is final: asked once, not retried.
                let revokedAgain = try AuthFixtures.refreshAuthorizer(server, refreshToken: "REVOKED-TOKEN")
                let before = server.tokens.requestCount
                await #expect(throws: AuthError.invalidGrant) { try await revokedAgain.currentToken(through: service) }
                #expect(server.tokens.requestCount == before + 1)

                let wrongSecret = try OAuth2RefreshTokenAuthorizer(clientID: AuthFixtures.clientID, clientSecret: "nope",
                                                                   refreshToken: AuthFixtures.refreshToken, tokenURL: server.url("/token"))
                await #expect(throws: AuthError.invalidClient) { try await wrongSecret.currentToken(through: service) }

                let unreachable = try OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: nil, refreshToken: "r",
                                                                   tokenURL: URL(string: "http://127.0.0.1:\(unusedPort())/token")!)
                let network = await #expect(throws: AuthError.self) { try await unreachable.currentToken(through: service) }
                #expect(network == .transport)
                #expect(network?.isTransient == true)
                #expect(network?.underlyingError is TransportError, "the transport failure is kept: \(String(describing: network?.underlyingError))")
            }
        }
    }

    @Test func queriesSurfaceAuthErrors() async throws {
        try await withTestServer { server in
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = try AuthFixtures.refreshAuthorizer(server, refreshToken: "UNKNOWN")
            try await withCheckedService(configuration: configuration) { service in
                await #expect(throws: AuthError.invalidGrant) { try await service.execute(AuthFixtures.protectedNote("x")) }
            }
        }
    }

    @Test func aSlowRefreshIsSharedByEveryone() async throws {
        try await withTestServer { server in
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            server.tokens.failNext(.slow(milliseconds: 300))
            let authorizer = try AuthFixtures.refreshAuthorizer(server)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<200 { group.addTask { try await authorizer.currentToken().value } }
                var values = Set<String>()
                for try await value in group { values.insert(value) }
                return values
            }
            #expect(tokens.count == 1)
            #expect(server.tokens.refreshCount == 1)
        }
    }

    @Test func tokenStoreRoundTripsWithOwnerOnlyPermissions() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-store-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileTokenStore(path: directory.appendingPathComponent("token.json").path)
        let credentials = StoredCredentials(accessToken: "AT", expiresAt: Date(timeIntervalSince1970: 2_000_000_000),
                                            refreshToken: "RT", scopes: ["a", "b"])
        try await store.save(credentials)
        #expect(try await store.load() == credentials)
        let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!credentials.description.contains("AT,") && !credentials.description.contains("RT"))
        try await store.clear()
        #expect(try await store.load() == nil)
    }

    @Test func aStoredTokenSurvivesARestartAndRotationIsKept() async throws {
        try await withTestServer { server in
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            server.tokens.rotatesRefreshTokens = true
            let store = InMemoryTokenStore()
            let first = try AuthFixtures.refreshAuthorizer(server, store: store)
            let token = try await first.currentToken()
            #expect(server.tokens.refreshCount == 1)
            #expect(try await store.load()?.refreshToken == "rt-rotated-1")

            // A new process: the stored access token is reused, no refresh.
            let second = try AuthFixtures.refreshAuthorizer(server, store: store)
            #expect(try await second.currentToken() == token)
            #expect(server.tokens.refreshCount == 1)

            // When it must refresh, the rotated refresh token is the one that works.
            await second.invalidate(HTTPRequest(url: server.baseURL, headers: ["Authorization": "Bearer \(token.value)"]))
            #expect(try await second.currentToken() != token)
            #expect(server.tokens.refreshCount == 2)
        }
    }
}

@Suite struct AuthorizerTests {
    @Test func bearerAndAPIKeyCombine() async throws {
        let authorizer = CombinedAuthorizer(APIKeyAuthorizer(key: "K&Y-s3kr1t"), BearerTokenAuthorizer(token: "T-s3kr1t"))
        var request = HTTPRequest(url: URL(string: "https://h/p?a=1&key=old#frag")!)
        try await authorizer.authorize(&request)
        #expect(request.url.absoluteString == "https://h/p?a=1&key=K%26Y-s3kr1t#frag")
        #expect(request.headers["Authorization"] == "Bearer T-s3kr1t")
        var plain = HTTPRequest(url: URL(string: "https://h/p")!)
        try await APIKeyAuthorizer(key: "k-s3kr1t").authorize(&plain)
        #expect(plain.url.absoluteString == "https://h/p?key=k-s3kr1t")
        #expect(!"\(authorizer.authorizers)".contains("K&Y"))
    }

    @Test func tokenEndpointsMustBeHTTPSExceptOnLoopback() throws {
        #expect(throws: AuthError.insecureEndpoint) {
            try OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: nil, refreshToken: "r", tokenURL: URL(string: "http://oauth.example.com/token")!)
        }
        #expect(throws: Never.self) {
            _ = try OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: nil, refreshToken: "r", tokenURL: URL(string: "http://127.0.0.1:9/token")!)
            _ = try OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: nil, refreshToken: "r", tokenURL: URL(string: "http://localhost:9/token")!)
            _ = try OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: nil, refreshToken: "r", tokenURL: URL(string: "https://oauth2.googleapis.com/token")!)
        }
    }

    @Test func authorizationIsDroppedOnARedirectToAnotherHost() async throws {
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = BearerTokenAuthorizer(token: "s3kr1t")
            try await withCheckedService(configuration: configuration) { service in
                var query = Query<GenericObject>(api: TestAPIs.notes, name: "redirect", path: "/redirect-to")
                query.parameters.set("url", "http://localhost:\(server.baseURL.port!)/echo")
                let echo = try await service.execute(query)
                let headers = echo.json["headers"]?.arrayValue?.compactMap { $0[0]?.stringValue?.lowercased() } ?? []
                #expect(!headers.contains("authorization"))
            }
        }
    }
}

@Suite struct ApplicationDefaultCredentialsTests {
    @Test func readsAuthorizedUserAndServiceAccountFiles() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("adc-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let userFile = directory.appendingPathComponent("application_default_credentials.json")
            try JSONSerialization.data(withJSONObject: ["type": "authorized_user", "client_id": AuthFixtures.clientID,
                                                        "client_secret": AuthFixtures.clientSecret,
                                                        "refresh_token": AuthFixtures.refreshToken,
                                                        "token_uri": server.url("/token").absoluteString]).write(to: userFile)

            // gcloud's location, through CLOUDSDK_CONFIG.
            let user = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"], environment: ["CLOUDSDK_CONFIG": directory.path])
            #expect(user is OAuth2RefreshTokenAuthorizer)

            // GOOGLE_APPLICATION_CREDENTIALS wins, here with a service account.
            let account = try AuthFixtures.serviceAccount(registeredWith: server)
            defer { try? FileManager.default.removeItem(at: account.file) }
            let robot = try ApplicationDefaultCredentials.authorizer(
                scopes: ["notes.read"], environment: ["GOOGLE_APPLICATION_CREDENTIALS": account.file.path, "CLOUDSDK_CONFIG": directory.path])
            #expect(robot is ServiceAccountAuthorizer)

            for authorizer in [user, robot] {
                var configuration = ServiceActor.Configuration.testing(server.baseURL)
                configuration.auth.authorizer = authorizer
                try await withCheckedService(configuration: configuration) { service in
                    let note = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                    #expect(note.id == "note-0001")
                }
            }

            // No file: the metadata server, checked at the first token (GoogleCredentialsTests).
            #expect(try ApplicationDefaultCredentials.authorizer(scopes: [], environment: ["HOME": "/nonexistent"]) is MetadataServerAuthorizer)
            #expect(throws: AuthError.invalidCredentials) {
                try ApplicationDefaultCredentials.authorizer(scopes: [], environment: ["GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent.json"])
            }
        }
    }
}

/// No secret reaches a log line, an HTTP log file, an error or a description.
@Suite struct SecretHygieneTests {
    @Test func secretsNeverAppearInLogsErrorsOrDescriptions() async throws {
        let capture = CapturedLog()
        let logDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-secrets-\(UUID())")
        defer { try? FileManager.default.removeItem(at: logDirectory) }
        var secrets = [AuthFixtures.clientSecret, AuthFixtures.refreshToken, "API-KEY-s3kr1t-42"]
        var texts: [String] = []
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)
            let account = try AuthFixtures.serviceAccount(registeredWith: server)
            defer { try? FileManager.default.removeItem(at: account.file) }
            secrets.append(String(account.privateKey.split(separator: "\n")[1])) // a line of the PEM body

            let refresh = try AuthFixtures.refreshAuthorizer(server)
            let robot = try ServiceAccountAuthorizer(keyFile: account.file, scopes: ["notes.read"])
            for authorizer in [refresh, robot] as [any Authorizer] {
                var configuration = ServiceActor.Configuration.testing(server.baseURL)
                configuration.telemetry.logger = Logger(label: "secrets", factory: capture.handler)
                configuration.telemetry.httpLog = HTTPLogOptions(directory: logDirectory)
                configuration.auth.authorizer = CombinedAuthorizer(APIKeyAuthorizer(key: "API-KEY-s3kr1t-42"), authorizer)
                try await withCheckedService(configuration: configuration) { service in
                    _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                    server.tokens.expireAllTokens()
                    _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) // 401, refresh, retry
                    do { _ = try await service.execute(AuthFixtures.protectedNote("missing")) } catch { texts.append("\(error)") }
                }
                texts.append("\(authorizer)")
            }
            secrets.append(try await refresh.currentToken().value)
            secrets.append(try await robot.currentToken().value)
            texts.append("\(try await refresh.currentToken())")
            let bad = try AuthFixtures.refreshAuthorizer(server, refreshToken: "REVOKED-s3kr1t-TOKEN")
            secrets.append("REVOKED-s3kr1t-TOKEN")
            do { _ = try await bad.currentToken() } catch { texts.append("\(error)") }
            texts.append("\(try ServiceAccountKey(contentsOf: account.file))")
        }
        texts += capture.lines.withLock { $0 }
        for file in try FileManager.default.contentsOfDirectory(atPath: logDirectory.path) {
            texts.append(try String(contentsOf: logDirectory.appendingPathComponent(file), encoding: .utf8))
        }
        #expect(texts.count > 10)
        #expect(texts.contains { $0.contains("_snip_") }) // the log files did see credentials, snipped
        for text in texts {
            for secret in secrets {
                #expect(!text.contains(secret), "secret leaked into: \(text.prefix(300))")
            }
        }
    }
}
