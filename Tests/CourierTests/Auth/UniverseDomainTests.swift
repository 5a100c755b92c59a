@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import CourierTestSupport
import Testing

/// Universes (Google's AIP-4120): credentials are sent only to the service's universe, whatever
/// their kind; files and the metadata server say which universe credentials belong to; an API's
/// Google host moves into the service's universe. Against the test server's fakes.
@Suite struct UniverseDomainTests {
    static let sovereign = "sovereign.example"

    @discardableResult
    func withAuthorized<T: Sendable>(_ server: TestServer, _ authorizer: any Authorizer, universe: String? = nil,
                                     _ body: (ServiceActor) async throws -> T) async throws -> T {
        var configuration = ServiceActor.Configuration.testing(server.baseURL)
        configuration.auth.authorizer = authorizer
        configuration.universeDomain = universe
        return try await withCheckedService(configuration: configuration, body)
    }

    /// A service-account key of `universe`, its public key registered with `server`.
    func key(_ server: TestServer, universe: String?) throws -> ServiceAccountKey {
        let account = try AuthFixtures.serviceAccount(registeredWith: server)
        defer { try? FileManager.default.removeItem(at: account.file) }
        var object = try #require(try JSONSerialization.jsonObject(with: account.json) as? [String: Any])
        if let universe { object["universe_domain"] = universe }
        return try ServiceAccountKey(json: JSONSerialization.data(withJSONObject: object))
    }

    // MARK: The pipeline's check

    @Test func googleCredentialsAreNotSentToAnotherUniverse() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken)
            let authorizer = try AuthFixtures.refreshAuthorizer(server)
            let before = server.counters.requests
            try await withAuthorized(server, authorizer, universe: Self.sovereign) { service in
                let error = await #expect(throws: AuthError.universeMismatch) {
                    try await service.execute(AuthFixtures.protectedNote("note-0001"))
                }
                #expect(error?.message.contains(Self.sovereign) == true && error?.message.contains("googleapis.com") == true)
            }
            // Not the refresh token to the token endpoint, not a request to the API.
            #expect(server.tokens.refreshCount == 0)
            #expect(server.counters.requests == before)
        }
    }

    @Test func aServiceAccountOfAnotherUniverseSignsItsOwnTokensThere() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let key = try key(server, universe: "Sovereign.Example")
            #expect(key.universeDomain == Self.sovereign)
            // Its token_uri is the test server's, which is not Google's: still self-signed.
            let authorizer = try ServiceAccountAuthorizer(key: key, scopes: ["notes.read"])
            #expect(authorizer.selfSigned)
            try await withAuthorized(server, authorizer, universe: Self.sovereign) { service in
                let note = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                #expect(note.id == "note-0001")
            }
            #expect(server.tokens.jwtCount == 0)
            #expect(server.tokens.selfSignedAccepted >= 1)
            // The same key in a service of Google Cloud's universe: nothing sent.
            let before = server.counters.requests
            try await withAuthorized(server, authorizer) { service in
                await #expect(throws: AuthError.universeMismatch) { try await service.execute(AuthFixtures.protectedNote("note-0001")) }
            }
            #expect(server.counters.requests == before)
            // No domain-wide delegation and no token endpoint outside Google Cloud's universe.
            #expect(throws: AuthError.unsupportedCredentials) { try ServiceAccountAuthorizer(key: key, scopes: ["s"], subject: "u@example.com") }
            #expect(throws: AuthError.unsupportedCredentials) { try ServiceAccountAuthorizer(key: key, scopes: ["s"], selfSignedJWT: .never) }
            #expect(throws: AuthError.unsupportedCredentials) {
                try IDTokenAuthorizer(audience: "https://run.example", source: .serviceAccount(key))
            }
        }
    }

    @Test func theMetadataServerSaysWhichUniverseOnce() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.metadata.setUniverseDomain(Self.sovereign)
            let authorizer = MetadataServerAuthorizer(scopes: ["notes.read"], environment: ["GCE_METADATA_HOST": server.metadataHost])
            try await withAuthorized(server, authorizer) { service in
                await #expect(throws: AuthError.universeMismatch) { try await service.execute(AuthFixtures.protectedNote("note-0001")) }
            }
            #expect(server.metadata.tokenRequestCount == 0)
            try await withAuthorized(server, authorizer, universe: Self.sovereign) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.metadata.tokenRequestCount == 1)
            #expect(server.metadata.universeRequestCount == 1)
        }
    }

    @Test func aMetadataServerWithoutUniversesMeansGoogleCloud() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let authorizer = MetadataServerAuthorizer(scopes: ["notes.read"], environment: ["GCE_METADATA_HOST": server.metadataHost])
            try await withAuthorized(server, authorizer) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
            #expect(server.metadata.universeRequestCount == 1) // answered 404
            // An empty answer means Google Cloud too; a universe given at creation asks nothing.
            let empty = try await withTestServer { other in
                other.metadata.setUniverseDomain("")
                return try await MetadataServer(environment: ["GCE_METADATA_HOST": other.metadataHost]).universeDomain()
            }
            #expect(empty == UniverseDomain.googleDefault)
            let given = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost], universeDomain: Self.sovereign)
            #expect(try await given.universeDomain(context: nil) == Self.sovereign)
        }
    }

    /// What one `MetadataServer` (an authorizer's) learned is not what the next one is told: a
    /// server started later on the same address (a port used again, as the suite's servers do)
    /// answered with the first one's universe while the answer was kept by URL for the process.
    @Test func theNextMetadataServerValueAsksAgain() async throws {
        try await withTestServer { server in
            let environment = ["GCE_METADATA_HOST": server.metadataHost]
            server.metadata.setUniverseDomain(Self.sovereign)
            let first = MetadataServer(environment: environment)
            let learned = try await first.universeDomain()
            #expect(learned == Self.sovereign)
            server.metadata.setUniverseDomain("")
            let again = try await first.universeDomain()
            #expect(again == Self.sovereign, "a value asks once")
            #expect(server.metadata.universeRequestCount == 1)
            let next = try await MetadataServer(environment: environment).universeDomain()
            #expect(next == UniverseDomain.googleDefault)
            #expect(server.metadata.universeRequestCount == 2)
            #expect(first == MetadataServer(environment: environment), "equal by address: what was learned is no part of it")
        }
    }

    @Test func aMetadataServerUniverseThatIsNoDomainIsAnError() async throws {
        try await withTestServer { server in
            server.metadata.setUniverseDomain("evil.example/path?")
            await #expect(throws: AuthError.metadataServer) {
                try await MetadataServer(environment: ["GCE_METADATA_HOST": server.metadataHost]).universeDomain()
            }
        }
    }

    // MARK: Files

    @Test func credentialsFilesNameTheirUniverse() async throws {
        let user: JSONObject = ["type": "authorized_user", "client_id": "c", "refresh_token": "REFRESH-s3kr1t"]
        var elsewhere = user
        elsewhere["universe_domain"] = .string(Self.sovereign)
        #expect(throws: AuthError.unsupportedCredentials) { try CredentialsFile(object: elsewhere) }
        var empty = user
        empty["universe_domain"] = ""
        _ = try CredentialsFile(object: empty) // empty or null: Google Cloud's, as Google's libraries read it
        empty["universe_domain"] = .null
        _ = try CredentialsFile(object: empty)
        for bad: JSONValue in ["evil.example/x", "a..b", "-a.example", "host:443", 42] {
            var object = user
            object["universe_domain"] = bad
            #expect(throws: AuthError.invalidCredentials) { try CredentialsFile(object: object) }
        }

        let external: JSONObject = [
            "type": "external_account", "audience": "//iam.googleapis.com/pool", "universe_domain": .string(Self.sovereign),
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "credential_source": ["file": "/dev/null"],
        ]
        let configuration = try ExternalAccountAuthorizer.Configuration(object: external, environment: [:])
        #expect(configuration.universeDomain == Self.sovereign)
        #expect(configuration.tokenURL.absoluteString == "https://sts.sovereign.example/v1/token")
        let federated = try ExternalAccountAuthorizer(configuration: configuration, scopes: [])
        var workforce: JSONObject = ["type": "external_account_authorized_user", "refresh_token": "REFRESH-s3kr1t",
                                     "token_url": "https://sts.sovereign.example/v1/oauthtoken"]
        workforce["universe_domain"] = .string(Self.sovereign)
        let refreshing = try CredentialsFile(object: workforce).authorizer(scopes: [], quotaProjectID: nil, refresh: .default)
        let impersonating = try ImpersonatedAuthorizer(source: federated, targetPrincipal: "t@p.iam.gserviceaccount.com", scopes: [])
        // None of these needs a service, or a request, to say its universe.
        #expect(try await federated.universeDomain(context: nil) == Self.sovereign)
        #expect(try await refreshing.universeDomain(context: nil) == Self.sovereign)
        #expect(try await impersonating.universeDomain(context: nil) == Self.sovereign)
    }

    @Test func impersonationCallsTheIAMOfItsSourcesUniverse() async throws {
        let source = BearerTokenAuthorizer(token: "t", universeDomain: Self.sovereign)
        struct Tokens: TokenAuthorizer {
            let inner: BearerTokenAuthorizer
            func token(context: AuthorizationContext?) async throws -> AccessToken { AccessToken(value: "t", expiresAt: .distantFuture) }
            func invalidateToken(_ value: String?) async {}
            func universeDomain(context: AuthorizationContext?) async throws -> String { try await inner.universeDomain(context: context) }
        }
        let iam = try IAMCredentials(endpoint: ImpersonatedAuthorizer.googleIAMEndpoint)
        #expect(try await iam.inUniverse(of: Tokens(inner: source), through: nil).endpoint.absoluteString == "https://iamcredentials.sovereign.example")
        let local = try IAMCredentials(endpoint: URL(string: "http://127.0.0.1:9/iam")!)
        #expect(try await local.inUniverse(of: Tokens(inner: source), through: nil).endpoint == local.endpoint)
        let impersonated = try ImpersonatedAuthorizer(source: Tokens(inner: source), targetPrincipal: "t@p.iam.gserviceaccount.com", scopes: [])
        #expect(try await impersonated.universeDomain(context: nil) == Self.sovereign)
    }

    // MARK: The service's universe

    @Test func theServicesUniverseComesFromItsConfigurationThenTheEnvironment() throws {
        var configuration = ServiceActor.Configuration()
        #expect(try configuration.resolvedUniverseDomain { _ in nil } == UniverseDomain.googleDefault)
        #expect(try configuration.resolvedUniverseDomain { _ in "" } == UniverseDomain.googleDefault)
        #expect(try configuration.resolvedUniverseDomain { $0 == UniverseDomain.environmentVariable ? "Env.Example" : nil } == "env.example")
        #expect(throws: ConfigurationError.self) { try configuration.resolvedUniverseDomain { _ in "env.example/x" } }
        configuration.universeDomain = Self.sovereign
        #expect(try configuration.resolvedUniverseDomain { _ in "env.example" } == Self.sovereign)
        configuration.universeDomain = "not a domain"
        #expect(throws: ConfigurationError.self) { try ServiceActor(configuration: configuration) }
    }

    @Test func anAPIsGoogleHostMovesIntoTheUniverse() throws {
        let storage = APIDescription(name: "storage", version: "v1", rootURL: URL(string: "https://storage.googleapis.com/")!,
                                     servicePath: "storage/v1/", batchPath: "batch/storage/v1")
        let query = Query<Note>(api: storage, name: "storage.buckets.get", path: "b/{bucket}", pathParameters: ["bucket": "x"])
        var configuration = ServiceActor.Configuration()
        configuration.universeDomain = Self.sovereign
        #expect(try RequestBuilder.build(query, configuration: configuration).url.absoluteString
            .hasPrefix("https://storage.sovereign.example/storage/v1/b/x?"))
        configuration.universeDomain = nil
        #expect(try RequestBuilder.build(query, configuration: configuration).url.host == "storage.googleapis.com")
        // A root set by the user is theirs: kept in every universe, as are hosts not under googleapis.com.
        configuration.universeDomain = Self.sovereign
        configuration.queries.rootURL = URL(string: "http://127.0.0.1:8080/")!
        #expect(try RequestBuilder.build(query, configuration: configuration).url.host == "127.0.0.1")
        #expect(UniverseDomain.root(TestAPIs.notes.rootURL, in: Self.sovereign) == TestAPIs.notes.rootURL)
        #expect(UniverseDomain.root(URL(string: "https://evilgoogleapis.com/")!, in: Self.sovereign).host == "evilgoogleapis.com")
    }

    @Test func combinedAuthorizersMustShareAUniverse() async throws {
        try await withTestServer { server in
            let mixed = CombinedAuthorizer(BearerTokenAuthorizer(token: "a"), BearerTokenAuthorizer(token: "b", universeDomain: Self.sovereign))
            try await withAuthorized(server, mixed) { service in
                await #expect(throws: AuthError.universeMismatch) { try await service.send(HTTPRequest(url: server.url("/notes/v1/notes")),
                                                                                           options: RequestOptions(authorize: true)) }
            }
            // An API key goes wherever the service works.
            let keyed = CombinedAuthorizer(APIKeyAuthorizer(key: "KEY-s3kr1t"), BearerTokenAuthorizer(token: "b", universeDomain: Self.sovereign))
            try await withAuthorized(server, keyed, universe: Self.sovereign) { service in
                let response = try await service.send(HTTPRequest(url: server.url("/notes/v1/notes")), options: RequestOptions(authorize: true))
                #expect(response.status == 200)
            }
        }
    }
}
