@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

/// Every Google credential type end to end against the test server's fakes (metadata server,
/// STS, IAM Credentials, token endpoint), and Application Default Credentials' search order.
@Suite struct GoogleCredentialsTests {
    /// A service authorized by `authorizer`, against `server`.
    @discardableResult
    func withAuthorized<T: Sendable>(_ server: TestServer, _ authorizer: any Authorizer,
                                     _ body: (ServiceActor) async throws -> T) async throws -> T {
        var configuration = ServiceActor.Configuration.testing(server.baseURL)
        configuration.auth.authorizer = authorizer
        return try await withCheckedService(configuration: configuration, body)
    }

    /// A folder that stands for an empty home: no gcloud credentials in it.
    func emptyHome() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("home-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    func write(_ object: [String: Any]) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        return file
    }

    // MARK: Metadata server

    @Test func metadataServerTokensProjectAndEmail() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let authorizer = MetadataServerAuthorizer(scopes: ["notes.read", "notes.write"],
                                                      environment: ["GCE_METADATA_HOST": server.metadataHost])
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                #expect(try await authorizer.projectID(through: service) == "test-project")
                #expect(try await authorizer.email(through: service) == server.metadata.email)
            }
            #expect(server.metadata.tokenRequestCount == 1)
            #expect(server.metadata.lastScopes == "notes.read,notes.write")
            #expect(server.metadata.refusedCount == 0)
        }
    }

    @Test func metadataServerErrorsAreRetriedAndRequestsWithoutTheFlavorRefused() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.metadata.failNext(.serverError, .serverError)
            let authorizer = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                // The real server refuses requests without Metadata-Flavor: so does the fake.
                let bare = try await service.send(HTTPRequest(url: server.url("/computeMetadata/v1/project/project-id")))
                #expect(bare.status == 403)
            }
            #expect(server.metadata.tokenRequestCount == 1)
            // the universe (404: a server before universes), two 500s, the token, the bare request
            #expect(server.metadata.requestCount == 5)
            #expect(server.metadata.refusedCount == 1)
        }
    }

    @Test func aServerWithoutTheFlavorIsNotTheMetadataServer() async throws {
        try await withTestServer { server in
            server.metadata.failNext(.noFlavor)
            let authorizer = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
            try await withAuthorized(server, authorizer) { service in
                await #expect(throws: AuthError.metadataServer) { try await authorizer.currentToken(through: service) }
            }
        }
    }

    /// A VM's metadata server can be slow for its first seconds: detection waits 1 s, then longer.
    @Test func detectionOutwaitsASlowFirstAnswer() async throws {
        try await withTestServer { server in
            server.metadata.failNext(.slow(milliseconds: 1500))
            let detection = await MetadataServer(environment: ["GCE_METADATA_HOST": server.metadataHost]).detect()
            #expect(detection.available)
            // The first try timed out after 1 s; a loaded machine may need another before the answer.
            #expect(server.metadata.probeCount >= 2)
        }
    }

    /// A configured host's answer is kept by the value that asked (an authorizer's), not for the
    /// process: the next value asks again, so a server started later on that address is found
    /// (the suite's servers reuse ports; kept by URL, one test could get another's answer).
    @Test func aConfiguredHostIsDetectedAgainByTheNextValue() async throws {
        try await withTestServer { server in
            let environment = ["GCE_METADATA_HOST": server.metadataHost]
            let first = MetadataServer(environment: environment)
            let found = await first.detect()
            let again = await first.detect()
            #expect(found.available && again.available)
            #expect(server.metadata.probeCount == 1, "a value asks once")
            let next = await MetadataServer(environment: environment).detect()
            #expect(next.available)
            #expect(server.metadata.probeCount == 2)
        }
    }

    // MARK: Application Default Credentials

    @Test func withoutAFileADCUsesTheMetadataServer() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let home = try emptyHome()
            defer { try? FileManager.default.removeItem(at: home) }
            let environment = ["HOME": home.path, "GCE_METADATA_HOST": server.metadataHost]
            let authorizer = try await ApplicationDefaultCredentials.find(scopes: ["notes.read"], environment: environment)
            #expect(authorizer is MetadataServerAuthorizer)
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                #expect(try await ApplicationDefaultCredentials.projectID(environment: environment, through: service) == "test-project")
            }
            #expect(try await ApplicationDefaultCredentials.projectID(environment: environment.merging(["GOOGLE_CLOUD_PROJECT": "from-env"]) { $1 })
                == "from-env")
        }
    }

    @Test func nothingFoundNamesEveryPlaceLookedAt() async throws {
        let home = try emptyHome()
        defer { try? FileManager.default.removeItem(at: home) }
        // A metadata host nobody listens on: refused at once.
        let environment = ["HOME": home.path, "GCE_METADATA_HOST": "127.0.0.1:\(unusedPort())"]
        let error = await #expect(throws: AuthError.noCredentials) {
            try await ApplicationDefaultCredentials.find(scopes: [], environment: environment)
        }
        let message = error?.message ?? ""
        #expect(message.contains("GOOGLE_APPLICATION_CREDENTIALS is not set"))
        #expect(message.contains("\(home.path)/.config/gcloud/application_default_credentials.json does not exist"))
        #expect(message.contains("metadata server at http://127.0.0.1"))
        // The lazy form fails the first query with the same error.
        let lazy = try ApplicationDefaultCredentials.authorizer(scopes: [], environment: environment)
        try await withTestServer { server in
            try await withAuthorized(server, lazy) { service in
                await #expect(throws: AuthError.noCredentials) { try await service.execute(AuthFixtures.protectedNote("x")) }
            }
        }
    }

    @Test func aMissingFileNamedByTheEnvironmentIsAnError() throws {
        #expect(throws: AuthError.invalidCredentials) {
            try ApplicationDefaultCredentials.authorizer(scopes: [], environment: ["GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/sa.json"])
        }
    }

    @Test func quotaProjectBecomesTheUserProjectHeader() async throws {
        try await withTestServer { server in
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken)
            let file = try write(["type": "authorized_user", "client_id": AuthFixtures.clientID, "client_secret": AuthFixtures.clientSecret,
                                  "refresh_token": AuthFixtures.refreshToken, "token_uri": server.url("/token").absoluteString,
                                  "quota_project_id": "billed-project"])
            defer { try? FileManager.default.removeItem(at: file) }
            let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                                          environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
            #expect(authorizer.quotaProjectID == "billed-project")
            let overridden = try ApplicationDefaultCredentials.authorizer(
                scopes: [], environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path, "GOOGLE_CLOUD_QUOTA_PROJECT": "env-project"])
            #expect(overridden.quotaProjectID == "env-project")
            try await withAuthorized(server, authorizer) { service in
                var options = RequestOptions()
                options.authorize = true
                let echo = try await service.send(HTTPRequest(url: server.url("/echo")), options: options)
                #expect(String(decoding: echo.body, as: UTF8.self).lowercased().contains("billed-project"))
            }
        }
    }

    // MARK: Workload identity federation

    /// `token_lifetime_seconds` as Google's libraries take it: whole seconds from 600 to 43200.
    /// 1e300 trapped (`Duration.seconds` of a Double past Int128); now every value outside is a
    /// typed error naming the field.
    @Test(arguments: [1e300, -1.0, 599.0, 43_201.0, 1800.5])
    func anImpersonationLifetimeOutsideGooglesRangeIsRefused(seconds: Double) throws {
        func configuration(_ lifetime: Double) throws -> ExternalAccountAuthorizer.Configuration {
            let json = try JSONSerialization.data(withJSONObject: [
                "type": "external_account", "audience": "//iam.googleapis.com/pool", "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
                "credential_source": ["file": "/nonexistent/token"], "service_account_impersonation": ["token_lifetime_seconds": lifetime],
            ] as [String: Any])
            return try ExternalAccountAuthorizer.Configuration(json: json, environment: [:])
        }
        #expect(try configuration(600).impersonationLifetime == .seconds(600))
        #expect(try configuration(43_200).impersonationLifetime == .seconds(43_200))
        do {
            _ = try configuration(seconds)
            Issue.record("\(seconds) was accepted")
        } catch let error as AuthError {
            #expect(error == .invalidCredentials)
            #expect(error.message.contains("token_lifetime_seconds"), "\(error.message)")
        }
    }

    @Test func externalAccountFromAFileExchangesAtSTS() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("subject-\(UUID()).json")
            defer { try? FileManager.default.removeItem(at: tokenFile) }
            try JSONSerialization.data(withJSONObject: ["id_token": server.sts.issueSubjectToken()]).write(to: tokenFile)
            let file = try write([
                "type": "external_account", "audience": server.sts.audience,
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": server.url("/sts/v1/token").absoluteString,
                "credential_source": ["file": tokenFile.path, "format": ["type": "json", "subject_token_field_name": "id_token"]],
                "workforce_pool_user_project": "workforce-project",
            ])
            defer { try? FileManager.default.removeItem(at: file) }
            let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                                          environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
            #expect(authorizer is ExternalAccountAuthorizer)
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.sts.exchangeCount == 1)
            #expect(server.sts.lastScope == "notes.read")
            #expect(server.sts.lastOptions == #"{"userProject":"workforce-project"}"#)
        }
    }

    @Test func externalAccountFromAURLImpersonatesAServiceAccount() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            _ = server.sts.issueSubjectToken()
            let target = "deployer@test-project.iam.gserviceaccount.com"
            let file = try write([
                "type": "external_account", "audience": server.sts.audience,
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": server.url("/sts/v1/token").absoluteString,
                "credential_source": ["url": server.url("/sts/subject-token").absoluteString, "headers": ["Metadata": "true"],
                                      "format": ["type": "json", "subject_token_field_name": "id_token"]],
                "service_account_impersonation_url": server.url("/iam/v1/projects/-/serviceAccounts/\(target):generateAccessToken").absoluteString,
                "service_account_impersonation": ["token_lifetime_seconds": 1800],
            ])
            defer { try? FileManager.default.removeItem(at: file) }
            let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                                          environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.sts.subjectTokenReads == 1)
            #expect(server.sts.lastScope == "https://www.googleapis.com/auth/cloud-platform")
            #expect(server.iam.accessTokenCount == 1)
            #expect(server.iam.lastScopes == ["notes.read"])
            #expect(server.iam.lastLifetime == "1800s")
        }
    }

    /// A workforce user's credentials (`gcloud auth application-default login` with a workforce
    /// pool): refreshed at STS's oauthtoken endpoint, the client as HTTP Basic, no scope sent.
    @Test func externalAccountAuthorizedUserRefreshesAtSTS() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.registerClient(id: "workforce-client", secret: "WORKFORCE-s3kr1t", refreshToken: "WF-REFRESH-s3kr1t")
            let file = try write([
                "type": "external_account_authorized_user",
                "audience": "//iam.googleapis.com/locations/global/workforcePools/pool/providers/okta",
                "refresh_token": "WF-REFRESH-s3kr1t", "token_url": server.url("/sts/v1/oauthtoken").absoluteString,
                "token_info_url": server.url("/sts/v1/introspect").absoluteString,
                "client_id": "workforce-client", "client_secret": "WORKFORCE-s3kr1t", "quota_project_id": "billed-project",
            ])
            defer { try? FileManager.default.removeItem(at: file) }
            let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                                          environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
            #expect(authorizer.quotaProjectID == "billed-project")
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.sts.lastClientID == "workforce-client")
            #expect(server.tokens.refreshCount == 1 && server.tokens.lastScope == nil)
            #expect(!"\(authorizer)".contains("s3kr1t"))
        }
    }

    @Test func unsupportedSubjectTokenSourcesAreTypedErrors() throws {
        let file = try write(["type": "external_account", "audience": "//iam.googleapis.com/x",
                              "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
                              "credential_source": ["environment_id": "aws2", "region_url": "http://169.254.169.254/latest"]])
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: AuthError.unsupportedCredentials) {
            try ApplicationDefaultCredentials.authorizer(scopes: [], environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
        }
    }

    // MARK: Impersonation

    @Test func impersonatedServiceAccountFileWithDelegates() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken)
            let target = "target@test-project.iam.gserviceaccount.com"
            let delegates = ["projects/-/serviceAccounts/middle@test-project.iam.gserviceaccount.com"]
            let file = try write([
                "type": "impersonated_service_account", "delegates": delegates, "quota_project_id": "quota-project",
                "service_account_impersonation_url": server.url("/iam/v1/projects/-/serviceAccounts/\(target):generateAccessToken").absoluteString,
                "source_credentials": ["type": "authorized_user", "client_id": AuthFixtures.clientID, "client_secret": AuthFixtures.clientSecret,
                                       "refresh_token": AuthFixtures.refreshToken, "token_uri": server.url("/token").absoluteString],
            ])
            defer { try? FileManager.default.removeItem(at: file) }
            let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                                          environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
            #expect(authorizer is ImpersonatedAuthorizer)
            #expect(authorizer.quotaProjectID == "quota-project")
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.iam.accessTokenCount == 1)
            #expect(server.iam.lastDelegates == delegates)
            #expect(server.tokens.refreshCount == 1) // the source's token, once
        }
    }

    @Test func impersonationRefusedByIAMIsPermissionDenied() async throws {
        try await withTestServer { server in
            let source = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
            server.iam.deny("secret@test-project.iam.gserviceaccount.com")
            let authorizer = try ImpersonatedAuthorizer(source: source, targetPrincipal: "secret@test-project.iam.gserviceaccount.com",
                                                        scopes: ["notes.read"], iamEndpoint: server.url("/iam"))
            try await withAuthorized(server, authorizer) { service in
                await #expect(throws: AuthError.permissionDenied) { try await service.execute(AuthFixtures.protectedNote("x")) }
            }
        }
    }

    // MARK: ID tokens

    @Test func idTokensFromTheMetadataServerAKeyAndImpersonation() async throws {
        try await withTestServer { server in
            let audience = "https://hello-abc123-uc.a.run.app"
            let account = try AuthFixtures.serviceAccount(registeredWith: server)
            defer { try? FileManager.default.removeItem(at: account.file) }
            let sources: [IDTokenAuthorizer] = [
                try IDTokenAuthorizer(audience: audience, source: .metadataServer(MetadataServer(environment: ["GCE_METADATA_HOST": server.metadataHost]))),
                try ApplicationDefaultCredentials.idTokenAuthorizer(audience: audience, environment: ["GOOGLE_APPLICATION_CREDENTIALS": account.file.path]),
                try IDTokenAuthorizer(audience: audience, source: .impersonation(
                    source: MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost]),
                    targetPrincipal: "invoker@test-project.iam.gserviceaccount.com", iamEndpoint: server.url("/iam"))),
            ]
            try await withAuthorized(server, BearerTokenAuthorizer(token: "unused")) { service in
                for authorizer in sources {
                    let token = try await authorizer.currentToken(through: service)
                    let claims = try #require(Data(anyBase64: String(token.value.split(separator: ".")[1])))
                    let object = try #require(try JSONValue(parsing: claims).objectValue)
                    #expect(object["aud"]?.stringValue == audience)
                    let expiry = try #require(token.expiresAt)
                    #expect(expiry > Date().addingTimeInterval(3000))
                    // Cached: the second ask makes no request.
                    #expect(try await authorizer.currentToken(through: service).value == token.value)
                }
            }
            #expect(server.metadata.identityRequestCount == 1)
            #expect(server.iam.idTokenCount == 1)
            #expect(server.tokens.idTokensIssued == 3)
        }
    }

    @Test func userCredentialsCannotMakeIDTokens() throws {
        let file = try write(["type": "authorized_user", "client_id": "c", "refresh_token": "r-s3kr1t"])
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(throws: AuthError.unsupportedCredentials) {
            try ApplicationDefaultCredentials.idTokenAuthorizer(audience: "https://x", environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
        }
    }

    // MARK: Self-signed JWT

    @Test func selfSignedJWTsMakeNoTokenRoundTrip() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let account = try TestServiceAccount(email: "signer@test-project.iam.example.com", tokenURL: server.url("/token"),
                                                 keyPair: .sharedInProcess)
            try server.tokens.registerServiceAccount(email: account.email, publicKeyPEM: account.publicKeyPEM)
            let scoped = try ServiceAccountAuthorizer(key: account.key, scopes: ["notes.read"], selfSignedJWT: .always)
            let audienced = try ServiceAccountAuthorizer(key: account.key, scopes: [], selfSignedJWT: .always)
            #expect(scoped.selfSigned && audienced.selfSigned)
            for authorizer in [scoped, audienced] {
                try await withAuthorized(server, authorizer) { service in
                    _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                    _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                }
            }
            #expect(server.tokens.requestCount == 0) // no token endpoint round trip at all
            // Outside a request (another credential's IAM call, say) a scope-less one is a cloud-platform token.
            let direct = try await audienced.currentToken()
            let claims = try JSONValue(parsing: #require(Data(anyBase64: String(direct.value.split(separator: ".")[1])))).objectValue
            #expect(claims?["scope"]?.stringValue == "https://www.googleapis.com/auth/cloud-platform")
            #expect(server.tokens.selfSignedAccepted == 4)
            // Automatic: self-signed for Google's token endpoint, the token endpoint otherwise or with a subject.
            #expect(try !ServiceAccountAuthorizer(key: account.key, scopes: ["s"]).selfSigned)
            #expect(try ServiceAccountAuthorizer(key: account.key, scopes: ["s"], tokenURL: URL(string: "https://oauth2.googleapis.com/token")!).selfSigned)
            #expect(try !ServiceAccountAuthorizer(key: account.key, scopes: ["s"], subject: "user@example.com",
                                                   tokenURL: URL(string: "https://oauth2.googleapis.com/token")!).selfSigned)
        }
    }

    // MARK: Secrets

    /// Descriptions and errors of every new credential type show no token, subject token, key or JWT.
    @Test func descriptionsAndErrorsHoldNoSecret() async throws {
        try await withTestServer { server in
            let account = try AuthFixtures.serviceAccount(registeredWith: server)
            defer { try? FileManager.default.removeItem(at: account.file) }
            let subject = server.sts.issueSubjectToken()
            let metadata = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
            let federation = try ExternalAccountAuthorizer(configuration: ExternalAccountAuthorizer.Configuration(
                json: JSONSerialization.data(withJSONObject: [
                    "type": "external_account", "audience": "//iam.googleapis.com/wrong-pool",
                    "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": server.url("/sts/v1/token").absoluteString,
                    "credential_source": ["url": server.url("/sts/subject-token").absoluteString, "headers": ["Metadata": "true"],
                                          "format": ["type": "json", "subject_token_field_name": "id_token"]],
                ])), scopes: [])
            let authorizers: [any TokenAuthorizer] = [
                metadata, federation,
                try ImpersonatedAuthorizer(source: metadata, targetPrincipal: "t@p.iam.gserviceaccount.com", scopes: [], iamEndpoint: server.url("/iam")),
                try IDTokenAuthorizer(audience: "https://x", source: .serviceAccount(ServiceAccountKey(contentsOf: account.file))),
                try ServiceAccountAuthorizer(keyFile: account.file, scopes: ["s"], selfSignedJWT: .always),
            ]
            var texts: [String] = []
            try await withAuthorized(server, BearerTokenAuthorizer(token: "unused")) { service in
                for authorizer in authorizers {
                    texts.append("\(authorizer)")
                    do { texts.append("\(try await authorizer.currentToken(through: service))") } catch { texts.append("\(error)") }
                }
            }
            #expect(texts.count == 10)
            #expect(texts.contains { $0.contains("invalidGrant") }) // the federation's wrong audience, typed
            for text in texts {
                #expect(!text.contains("s3kr1t") && !text.contains(subject) && !text.contains("eyJ") && !text.contains("PRIVATE KEY"), "\(text)")
            }
        }
    }

    /// A parsed `external_account` file, printed (a user logging what they loaded), showed its
    /// client secret and the subject-token URL's header values: the public struct had no
    /// description of its own, so Swift printed every field. Found by FuzzJSON's secret check.
    @Test func anExternalAccountConfigurationPrintsNoSecret() throws {
        let configuration = try ExternalAccountAuthorizer.Configuration(json: JSONSerialization.data(withJSONObject: [
            "type": "external_account", "audience": "//iam.googleapis.com/pool", "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": "https://sts.googleapis.com/v1/token", "client_id": "c", "client_secret": "client-s3kr1t",
            "credential_source": ["url": "https://idp.example/token?access_token=q-s3kr1t", "headers": ["Authorization": "Bearer h-s3kr1t"]],
        ]))
        for text in [String(describing: configuration), String(reflecting: configuration), "\(configuration.subjectToken)"] {
            #expect(!text.contains("s3kr1t"), "\(text)")
            #expect(text.contains("idp.example/token") && text.contains("Authorization"), "\(text)")
        }
    }

    /// The metadata server's address comes from the environment: one that makes no URL is
    /// reported (detection, and an AuthError on use), never a trap, and nothing is sent.
    @Test(arguments: ["not a host", "http://", "127.0.0.1:99999", "h\u{7F}st"])
    func anUnusableMetadataHostIsReported(host: String) async throws {
        let server = MetadataServer(environment: ["GCE_METADATA_HOST": host])
        let detection = await server.detect()
        #expect(!detection.available)
        #expect(detection.detail.contains("is not a host"), "\(detection.detail)")
        await #expect(throws: AuthError.metadataServer) { _ = try await server.projectID() }
    }
}
