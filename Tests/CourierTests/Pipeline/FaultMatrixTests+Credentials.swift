@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// The matrix's faults of credentials and redirects, on every operation, and the faults of the
/// resumable upload protocol on the one operation that speaks it.
extension FaultMatrixTests {
    /// A refresh-token authorizer against the test token server, with the fault header on top.
    static func authorized(_ server: TestServer, fault: String, tokenURL: URL? = nil,
                           idle: Duration = .seconds(15)) throws -> ServiceActor.Configuration {
        var configuration = configuration(root: server.baseURL, fault: fault, idle: idle)
        let refresh = try OAuth2RefreshTokenAuthorizer(
            clientID: AuthFixtures.clientID, clientSecret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken,
            scopes: ["notes.read"], tokenURL: tokenURL ?? server.url("/token"))
        configuration.auth.authorizer = CombinedAuthorizer(FaultInjector(fault: fault), refresh)
        return configuration
    }

    @Test(.timeLimit(.minutes(5)), arguments: Operation.allCases)
    func credentialAndRedirectFaults(operation: Operation) async throws {
        try await withTestServer { server in
            let fileID = try await Self.prepare(server)
            server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret,
                                         refreshToken: AuthFixtures.refreshToken)

            // The token expired on the server: one 401, one refresh, then success.
            let grantsBefore = server.tokens.refreshCount
            // The count of grants is exact only if no token request times out after the server
            // granted it (then the retry is a third grant). With every test at once on two cores
            // (a plain `swift test`), the in-process server has stalled past 15 s at the suite's
            // start, so this run gets a minute; `make test` runs 16 at a time and it answers in ms.
            let expired = try await Self.run(operation, Self.authorized(server, fault: "401x1", idle: .seconds(60)), server: server,
                                             fileID: fileID, label: "401")
            #expect(expired == nil, "\(operation) after a 401: \(String(describing: expired))")
            #expect(server.tokens.refreshCount - grantsBefore == 2, "\(operation): the first token and one refresh")

            // The token endpoint is down (nothing listens): a typed AuthError, before any request.
            let unreachable = URL(string: "http://127.0.0.1:\(unusedPort())/token")!
            let down = try await Self.run(operation, Self.authorized(server, fault: "none", tokenURL: unreachable),
                                          server: server, fileID: fileID, label: "token endpoint down")
            #expect(down is AuthError, "\(operation) with the token endpoint down: \(String(describing: down))")

            // A 401, and the token endpoint fails the refresh: a typed AuthError.
            var failing = try Self.authorized(server, fault: "401x1")
            if let combined = failing.auth.authorizer as? CombinedAuthorizer, let refresh = combined.authorizers.last {
                var probe = HTTPRequest(url: server.baseURL)
                try await refresh.authorize(&probe) // holds a token before the endpoint fails
            }
            failing.retry = .disabled
            for _ in 0..<5 { server.tokens.failNext(.serverError) }
            let refused = try await Self.run(operation, failing, server: server, fileID: fileID, label: "401, endpoint 500")
            #expect(refused is AuthError, "\(operation) after a 401 with the token endpoint failing: \(String(describing: refused))")

            // Every request redirected to itself: curl stops at maxRedirects, a typed error.
            let loop = try await Self.run(operation, Self.configuration(root: server.baseURL, fault: "redirect-loop"),
                                          server: server, fileID: fileID, label: "redirect loop")
            #expect(loop as? TransportError == .tooManyRedirects,
                    "\(operation) in a redirect loop: \(String(describing: loop))")

            await Self.expectNothingLeftOpen(server)
        }
    }

    /// The resumable upload protocol's own faults: acknowledgements of part of a chunk (308 with
    /// a shorter Range) and a session that expires after its first chunk.
    @Test(.timeLimit(.minutes(5))) func uploadSessionFaults() async throws {
        try await withTestServer { server in
            let contents = Data(TestPattern.bytes(count: 700_000))
            let cases: [(label: String, faults: [String: String], restart: Bool, succeeds: Bool)] = [
                ("partial 308s", ["partial": "100000"], true, true),
                ("expired session, restarted", ["expire": "1"], true, true),
                ("expired session, not restarted", ["expire": "1"], false, false),
                ("partial 308s, then the session expires", ["partial": "100000", "expire": "2"], true, true),
            ]
            for test in cases {
                var parameters = UploadParameters(data: contents, mimeType: "application/octet-stream")
                parameters.chunkSize = 256 << 10
                parameters.restartWhenSessionExpires = test.restart
                var configuration = ServiceActor.Configuration.testing(server.baseURL)
                configuration.retry = RetryPolicy(maxRetries: 3, initialDelay: 0.01...0.02, multiplier: 2, maxDelay: .seconds(1))
                let started = ContinuousClock.now
                let outcome = await Result {
                    try await withCheckedService(configuration: configuration) { service in
                        let stored = await Result {
                            try await service.execute(Files.insert(server, name: "session-\(UUID())", upload: parameters,
                                                                   faults: test.faults))
                        }
                        await expectNoLeaks(service)
                        return try stored.get().json["id"]?.stringValue ?? ""
                    }
                }
                // About 5 s each alone; the bound catches a runaway loop (an upload once alternated
                // timeouts and status queries forever), not speed: the parallel suite on 2 cores
                // doubles the time.
                #expect(ContinuousClock.now - started < .seconds(120), "\(test.label) took too long")
                switch outcome {
                case .success(let id):
                    #expect(test.succeeds, "\(test.label) succeeded")
                    let media = try await withCheckedService(configuration: .testing(server.baseURL)) { try await $0.execute(Files.media(server, id: id)) }
                    #expect(media.data == contents, "\(test.label): the upload arrived changed")
                case .failure(let error):
                    #expect(!test.succeeds, "\(test.label): \(error)")
                    #expect(error as? UploadError == .sessionExpired, "\(test.label): \(error)")
                }
            }
        }
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing body.
    init(_ body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
