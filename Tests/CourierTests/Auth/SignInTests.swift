@testable import Courier
import CourierSync
import CourierTestServer
import CourierTesting
import CourierTestSupport
import Foundation
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#endif

enum SignInFixtures {
    static func client(_ server: TestServer) -> OAuthClient {
        server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret, refreshToken: "unused-s3kr1t")
        return OAuthClient(clientID: AuthFixtures.clientID, clientSecret: AuthFixtures.clientSecret,
                           authorizationURL: server.url("/o/oauth2/v2/auth"), tokenURL: server.url("/token"),
                           deviceAuthorizationURL: server.url("/device/code"))
    }

    /// Whether anything accepts connections on 127.0.0.1:`port`.
    static func isListening(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// The consent URL's redirect URI (and so the listener's port) and state.
    static func redirect(of consent: URL) throws -> (uri: String, port: Int, state: String) {
        let items = URLComponents(url: consent, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let uri = try #require(items.first { $0.name == "redirect_uri" }?.value)
        let port = try #require(URLComponents(string: uri)?.port)
        return (uri, port, try #require(items.first { $0.name == "state" }?.value))
    }
}

/// PKCE against RFC 7636's own worked example (Appendix B), as data.
@Suite struct PKCETests {
    @Test func theRFCsExampleHashesToItsChallenge() {
        // Appendix B: the 32 random octets, their base64url verifier, and its S256 challenge.
        let octets: [UInt8] = [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186,
                               22, 212, 37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121]
        #expect(PKCE.base64URL(octets) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk").challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func aNewVerifierIsFortyThreeUnreservedCharactersAndNeverRepeats() {
        let verifiers = (0..<100).map { _ in PKCE().verifier }
        #expect(Set(verifiers).count == 100)
        for verifier in verifiers {
            #expect(verifier.count == 43)
            #expect(verifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
        }
    }
}

/// The loopback redirect's rules, one request at a time (no socket).
@Suite struct LoopbackRedirectTests {
    let redirect = LoopbackRedirect(redirectURI: "http://127.0.0.1:5000/", state: "the-state")

    @Test func onlyTheRightStateEndsTheSignInWithItsCode() {
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/favicon.ico")).outcome == nil)
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/favicon.ico")).status == 404)
        #expect(redirect.answer(LoopbackRequest(method: "POST", target: "/?code=c&state=the-state")).outcome == nil)
        let good = redirect.answer(LoopbackRequest(method: "GET", target: "/?code=4%2Fc-s3kr1t&scope=a%20b&state=the-state"))
        #expect(good.outcome == .success("4/c-s3kr1t") && good.status == 200)
        // Another state, or none: refused (400), counted, and no outcome: the sign-in waits on.
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/?code=c&state=other")).status == 400)
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/?code=c&state=other")).outcome == nil)
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/?code=c")).outcome == nil)
        // An error without the right state is not believed either.
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/?error=access_denied")).outcome == nil)
        #expect(redirect.refused.withLock { $0 } == 4)
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/?error=access_denied&state=the-state")).outcome == .failure(.accessDenied))
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/?error=invalid_scope&state=the-state")).outcome == .failure(.authorizationRefused))
        #expect(redirect.answer(LoopbackRequest(method: "GET", target: "/?state=the-state")).outcome == .failure(.authorizationRefused))
    }

    @Test func aRequestHeadIsParsedOnlyWhenComplete() {
        #expect(LoopbackListener.parse(Array("GET /?code=1 HTTP/1.1\r\nHost: x\r\n".utf8)) == nil)
        #expect(LoopbackListener.parse(Array("GET /?code=1 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)) == LoopbackRequest(method: "GET", target: "/?code=1"))
        #expect(LoopbackListener.parse(Array("garbage\r\n\r\n".utf8)) == LoopbackRequest(method: "", target: ""))
    }
}

/// Sign-in by browser, end to end: headless Chromium loads the consent page of the test
/// server's authorization fake, which redirects to Courier's loopback listener.
@Suite struct BrowserSignInTests {
    /// Runs a browser sign-in while Chromium shows its consent page; returns its outcome and the consent URL.
    static func signInInChromium(_ signIn: UserSignIn, timeout: Duration = .seconds(60)) async throws
        -> (Result<UserCredentials, any Error>, URL)
    {
        let (urls, continuation) = AsyncStream<URL>.makeStream()
        let task = Task { try await signIn.withBrowser(timeout: timeout) { continuation.yield($0) } }
        var iterator = urls.makeAsyncIterator()
        let consent = try #require(await iterator.next())
        let outcome = try await withChromium(showing: consent) { await task.result }
        return (outcome, consent)
    }

    @Test func aPersonWhoAllowsGivesATokenThatReachesTheAPIAndIsStored() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sign-in-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = FileTokenStore(path: directory.appendingPathComponent("token.json").path)
            let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read", "notes.write"], store: store,
                                    loginHint: "ada@example.com")
            let (outcome, consent) = try await Self.signInInChromium(signIn)
            let credentials = try outcome.get()

            // What the consent URL asked for, as the fake saw it from the browser.
            let query = server.tokens.signIn.lastAuthorizationQuery
            #expect(query["access_type"] == "offline" && query["prompt"] == "consent" && query["response_type"] == "code")
            #expect(query["code_challenge_method"] == "S256" && query["code_challenge"]?.count == 43)
            #expect(query["scope"] == "notes.read notes.write" && query["login_hint"] == "ada@example.com")
            #expect(query["redirect_uri"]?.hasPrefix("http://127.0.0.1:") == true && query["redirect_uri"]?.hasSuffix("/") == true)
            #expect(server.tokens.signIn.codeExchanges == 1 && server.tokens.signIn.refusedExchanges == 0)
            #expect(credentials.scopes == ["notes.read", "notes.write"])
            #expect(!"\(credentials)".contains(credentials.refreshToken))

            // The listener is gone, and the token works on an API route.
            let port = try SignInFixtures.redirect(of: consent).port
            #expect(!SignInFixtures.isListening(port: port))
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = try credentials.authorizer()
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                server.tokens.expireAllTokens()
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) // the refresh token works too
            }
            #expect(server.tokens.refreshCount == 1)

            // Saved for the next run, readable by its owner only.
            let stored = try #require(try await store.load())
            #expect(stored.refreshToken == credentials.refreshToken)
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int)
            #expect(mode & 0o777 == 0o600)
        }
    }

    /// Declined: at once. A redirect with another state: refused, and the sign-in waits on for
    /// its own until its timeout, then says what it refused.
    @Test(arguments: [(SignInFake.Consent.deny, AuthError.accessDenied), (.wrongState, .stateMismatch)])
    func aSignInThatDoesNotCompleteEndsWithItsErrorAndNothingListening(consent: SignInFake.Consent, expected: AuthError) async throws {
        try await withTestServer { server in
            server.tokens.signIn.consent = consent
            let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"])
            let (outcome, consentURL) = try await Self.signInInChromium(signIn, timeout: consent == .wrongState ? .seconds(8) : .seconds(60))
            if consent == .wrongState {
                #expect((try? outcome.get()) == nil && "\(outcome)".contains("1 redirect(s) with another state were refused"))
            }
            #expect(throws: expected) { try outcome.get() }
            #expect(server.tokens.signIn.consentPageCount == 1) // the browser did get there
            #expect(server.tokens.signIn.codeExchanges == 0 && server.tokens.signIn.refusedExchanges == 0)
            #expect(!SignInFixtures.isListening(port: try SignInFixtures.redirect(of: consentURL).port))
        }
    }

    /// Nobody answers (a person who walked away): no browser is needed to wait for nothing.
    @Test func aSignInNobodyAnswersTimesOutWithNothingListening() async throws {
        try await withTestServer { server in
            let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"])
            let port = LockedValue(0)
            await #expect(throws: AuthError.signInTimedOut) {
                _ = try await signIn.withBrowser(timeout: .seconds(1)) { consent in
                    let found = try SignInFixtures.redirect(of: consent).port
                    port.withLock { $0 = found }
                }
            }
            #expect(port.withLock { $0 } != 0 && !SignInFixtures.isListening(port: port.withLock { $0 }))
        }
    }
}

/// The listener and the exchange without a browser: a scripted client plays each part.
@Suite struct LoopbackListenerTests {
    /// Any local process (or a web page) that finds the port can send a redirect: one with
    /// another state, a code or an error in it, is refused and ends nothing; the person's own
    /// redirect that follows completes the sign-in. Before, the first one ended it.
    @Test func aForgedRedirectCannotEndTheSignIn() async throws {
        try await withTestServer { server in
            let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"])
            let refusals = LockedValue<[Int]>([])
            let credentials = try await signIn.withBrowser(timeout: .seconds(30)) { consent in
                let (_, port, state) = try SignInFixtures.redirect(of: consent)
                _ = state
                Task {
                    for forged in ["/?error=access_denied&state=forged", "/?code=4%2Fforged-s3kr1t&state=forged", "/?code=4%2Fno-state"] {
                        let status = try await Self.get(port: port, forged)
                        refusals.withLock { $0.append(status) }
                    }
                    // Then the person: the consent page, Allow, and the redirect it answers with.
                    var configuration = ServiceActor.Configuration()
                    configuration.transport.followRedirects = false
                    try await withCheckedService(configuration: configuration) { service in
                        let page = String(decoding: try await service.send(HTTPRequest(url: consent)).body, as: UTF8.self)
                        let id = try #require(page.range(of: #"name="request" value="[^"]+""#, options: .regularExpression)
                            .map { page[$0].dropFirst(#"name="request" value=""#.count).dropLast() })
                        var approve = HTTPRequest(method: .post, url: server.url("/o/oauth2/v2/approve"))
                        approve.headers["Content-Type"] = "application/x-www-form-urlencoded"
                        approve.body = .data(Data("request=\(id)&decision=allow".utf8))
                        let location = try #require(try await service.send(approve).headers["Location"])
                        _ = try await service.send(HTTPRequest(url: try #require(URL(string: location))))
                    }
                }
            }
            #expect(refusals.withLock { $0 } == [400, 400, 400])
            #expect(server.tokens.signIn.codeExchanges == 1)
            #expect(credentials.scopes == ["notes.read"])
        }
    }

    /// A GET to the listener, as a browser sends it; returns the status line.
    static func get(port: Int, _ target: String) async throws -> Int {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(target)"))
        return try await withCheckedService(configuration: .init()) { service in try await service.send(HTTPRequest(method: .get, url: url)).status }
    }

    @Test func idleConnectionsAndOtherPathsDoNotHoldUpTheRedirect() async throws {
        try await withTestServer { server in
            let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"])
            let statuses = LockedValue<[Int]>([])
            let idle = LockedValue<Int32>(-1)
            let outcome = await Result { try await signIn.withBrowser(timeout: .seconds(60)) { consent in
                let (_, port, state) = try SignInFixtures.redirect(of: consent)
                // A preconnect that never sends a byte, then a favicon, then the redirect with a code
                // the authorization server never issued.
                let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                idle.withLock { $0 = socket }
                Task {
                    let favicon = try await Self.get(port: port, "/favicon.ico")
                    let redirect = try await Self.get(port: port, "/?code=4%2Fforged-s3kr1t&state=\(state)")
                    statuses.withLock { $0 = [favicon, redirect] }
                }
            } }
            close(idle.withLock { $0 })
            // The code reached the token endpoint with its verifier, which refused it: the exchange is real.
            #expect(throws: AuthError.invalidGrant) { try outcome.get() }
            #expect(server.tokens.signIn.refusedExchanges == 1)
            #expect(await eventually { !statuses.withLock { $0 }.isEmpty })
            #expect(statuses.withLock { $0 } == [404, 200])
        }
    }

    @Test func aCancelledSignInStopsListeningAtOnce() async throws {
        try await withTestServer { server in
            let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"])
            let port = LockedValue(0)
            let task = Task {
                try await signIn.withBrowser(timeout: .seconds(3600)) { consent in
                    let found = try SignInFixtures.redirect(of: consent).port
                    port.withLock { $0 = found }
                }
            }
            #expect(await eventually { port.withLock { $0 } != 0 })
            #expect(SignInFixtures.isListening(port: port.withLock { $0 }))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(!SignInFixtures.isListening(port: port.withLock { $0 }))
        }
    }

    /// The fake's exchange checks what a real server checks: the verifier must hash to the
    /// challenge, and a code works once. Without this, the end-to-end test could pass with any verifier.
    @Test func theFakeRefusesAWrongVerifierAndASecondUse() async throws {
        try await withTestServer { server in
            let client = SignInFixtures.client(server)
            let signIn = UserSignIn(client: client, scopes: ["notes.read"])
            let pkce = PKCE()
            let redirectURI = "http://127.0.0.1:9/"
            let consent = try signIn.consentURL(redirectURI: redirectURI, state: "s", challenge: pkce.challenge)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.transport.followRedirects = false
            try await withCheckedService(configuration: configuration) { service in
                let page = String(decoding: try await service.send(HTTPRequest(method: .get, url: consent)).body, as: UTF8.self)
                let id = try #require(page.firstMatch(of: /name="request" value="([^"]+)"/)?.1)
                var approve = HTTPRequest(method: .post, url: server.url("/o/oauth2/v2/approve"))
                approve.headers["Content-Type"] = "application/x-www-form-urlencoded"
                approve.body = .data(Data("request=\(id)&decision=allow".utf8))
                let location = try #require(try await service.send(approve).headers["Location"])
                let code = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "code" }?.value)
                let signInHere = UserSignIn(client: client, scopes: ["notes.read"], through: service)
                let exchange = { (verifier: String) in
                    try await signInHere.redeem([("grant_type", "authorization_code"), ("code", code), ("code_verifier", verifier),
                                                 ("redirect_uri", redirectURI)], name: "oauth2.code")
                }
                await #expect(throws: AuthError.invalidGrant) { try await exchange(PKCE().verifier) }
                // The wrong verifier spent the code, as Google's server does.
                await #expect(throws: AuthError.invalidGrant) { try await exchange(pkce.verifier) }
            }
            #expect(server.tokens.signIn.refusedExchanges == 2 && server.tokens.signIn.codeExchanges == 0)
        }
    }
}

/// The device flow (RFC 8628) on a virtual clock: the polls' timing is the RFC's, exactly.
@Suite struct DeviceSignInTests {
    @Test func pendingTwiceThenSlowDownThenApprovedPollsAtTheRFCsIntervals() async throws {
        try await withTestServer { server in
            server.notes.seed(count: 1)
            server.tokens.signIn.scriptDevicePolls(.pending, .pending, .slowDown, .approve)
            let clock = VirtualClock()
            let prompts = LockedValue<[DeviceCodePrompt]>([])
            let credentials = try await UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"])
                .withDeviceCode(clock: clock) { prompt in prompts.withLock { $0.append(prompt) } }
            let shown = prompts.withLock { $0 }
            #expect(shown.count == 1)
            #expect(shown.first?.userCode == "CRUX-TEST" && shown.first?.verificationURL.path == "/device")
            #expect(shown.first?.expiresIn == .seconds(1800))
            // 5 s before each poll; 5 s more after slow_down.
            #expect(clock.sleeps == [.seconds(5), .seconds(5), .seconds(5), .seconds(10)])
            #expect(server.tokens.signIn.devicePollCount == 4)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.auth.authorizer = try credentials.authorizer()
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
            }
        }
    }

    @Test(arguments: [(SignInFake.DevicePoll.deny, AuthError.accessDenied), (.expire, .signInTimedOut)])
    func aDeniedOrExpiredCodeStopsPolling(poll: SignInFake.DevicePoll, expected: AuthError) async throws {
        try await withTestServer { server in
            server.tokens.signIn.scriptDevicePolls(.pending, poll)
            let clock = VirtualClock()
            await #expect(throws: expected) {
                try await UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"]).withDeviceCode(clock: clock) { _ in }
            }
            #expect(server.tokens.signIn.devicePollCount == 2)
        }
    }

    @Test func aCodeThatOutlivesItsExpiryStopsWithoutAnotherPoll() async throws {
        try await withTestServer { server in
            server.tokens.signIn.deviceInterval = 700 // 1,800 s of validity: two polls, then the third wait passes it
            server.tokens.signIn.scriptDevicePolls(.pending, .pending, .pending)
            let clock = VirtualClock()
            await #expect(throws: AuthError.signInTimedOut) {
                try await UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"]).withDeviceCode(clock: clock) { _ in }
            }
            #expect(server.tokens.signIn.devicePollCount == 2)
        }
    }

    @Test func aCancelledTaskStopsPollingAtOnce() async throws {
        try await withTestServer { server in
            server.tokens.signIn.deviceInterval = 3600
            let shown = LockedValue(false)
            let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"])
            let task = Task { try await signIn.withDeviceCode { _ in shown.withLock { $0 = true } } } // the real clock
            #expect(await eventually { shown.withLock { $0 } })
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(server.tokens.signIn.devicePollCount == 0)
        }
    }
}

/// No code, verifier, device code or token of a sign-in reaches a log line or the HTTP log.
@Suite struct SignInSecretTests {
    @Test func theExchangeAndThePollsAreLoggedWithTheirSecretsSnipped() async throws {
        let capture = CapturedLog()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sign-in-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        var texts: [String] = []
        try await withTestServer { server in
            server.tokens.signIn.scriptDevicePolls(.pending, .approve)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            var logger = Logger(label: "sign-in", factory: capture.handler)
            logger.logLevel = .trace
            configuration.telemetry.logger = logger
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
            try await withCheckedService(configuration: configuration) { service in
                let signIn = UserSignIn(client: SignInFixtures.client(server), scopes: ["notes.read"], through: service)
                let device = try await signIn.withDeviceCode(clock: VirtualClock()) { _ in }
                texts.append("\(device)")
                // The loopback exchange, its redirect played by a script (the browser test covers the browser).
                let outcome = await Result { try await signIn.withBrowser { consent in
                    let (_, port, state) = try SignInFixtures.redirect(of: consent)
                    Task { _ = try await LoopbackListenerTests.get(port: port, "/?code=4%2Fforged-s3kr1t-code&state=\(state)") }
                } }
                if case .failure(let error) = outcome { texts.append("\(error)") }
            }
        }
        texts += capture.lines.withLock { $0 }
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            texts.append(try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8))
        }
        let joined = texts.joined(separator: "\n")
        #expect(joined.contains("device_code=_snip_") && joined.contains("code_verifier=_snip_") && joined.contains("code=_snip_"))
        #expect(!joined.contains("s3kr1t"), "\(joined.prefix(2000))")
    }
}

/// What other parties hand the sign-in and federation parsers — any local process can send
/// bytes to the loopback listener; servers and programs answer as they like — never traps.
@Suite struct HostileSignInInputTests {
    struct Bytes: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state
        }
    }

    @Test func randomRequestsAndAnswersAreHandledOrRefused() throws {
        var random = Bytes(state: 42)
        let pieces = ["GET ", "/", "?", "code=", "state=s", "&", "error=", "%", "%ZZ", "\r\n", "\r\n\r\n", " HTTP/1.1", "\u{0}", "é", "=", "#", "//",
                      "access_denied", "..", "\u{FFFD}"]
        let redirect = LoopbackRedirect(redirectURI: "http://127.0.0.1:1/", state: "s")
        for _ in 0..<5_000 {
            let text = (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random) ?? "" }.joined()
            _ = LoopbackListener.parse(Array(text.utf8))
            _ = redirect.answer(LoopbackRequest(method: "GET", target: text))
        }
        let values: [JSONValue] = [.null, .bool(true), .string(""), .string("x"), 1e308, -1e308, 0, -1, 4_294_967_296, .array([]), .object([:])]
        let names = ["device_code", "user_code", "verification_url", "verification_uri", "expires_in", "interval", "version", "success",
                     "token_type", "id_token", "saml_response", "expiration_time", "code", "message"]
        for _ in 0..<5_000 {
            var object = JSONObject()
            for name in names where Bool.random(using: &random) { object[name] = values.randomElement(using: &random) }
            if Bool.random(using: &random) { object["token_type"] = .string("urn:ietf:params:oauth:token-type:id_token") }
            _ = try? DeviceAuthorization(object)
            _ = try? ExecutableSubjectToken.token(in: object, now: Date())
        }
        // The extremes a hostile device endpoint may send are bounded, not trapped on.
        let extreme = try DeviceAuthorization(["device_code": "d", "user_code": "u", "verification_url": "https://x/device",
                                               "expires_in": 1e308, "interval": -1e308])
        #expect(extreme.prompt.expiresIn == .seconds(86_400) && extreme.interval == .seconds(1))
    }
}
