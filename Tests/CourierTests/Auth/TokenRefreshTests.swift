@testable import Courier
import CourierSync
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// Tokens are renewed in the background before they expire: steady-state queries never wait.
@Suite struct TokenRefreshTests {
    /// 1,000 queries across a token's expiry, in four waves: before the refresh margin, inside it
    /// (one background refresh starts), and past the old token's expiry. Counted through the
    /// service's events: no query after the first waited for credentials.
    @Test(.timeLimit(.minutes(2)))
    func steadyStateQueriesNeverWaitForARefresh() async throws {
        try await withTestServer { server in
            let clock = MovableNow()
            let configuration = try refreshingConfiguration(server, clock: clock)
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) // the first token: a wait
                let waits = LockedValue(0)
                let refreshes = LockedValue<[(background: Bool, failed: Bool)]>([])
                let events = service.events
                let counting = Task {
                    for await event in events {
                        switch event {
                        case .waitedForCredentials: waits.withLock { $0 += 1 }
                        case .credentialsRefreshed(_, _, let background, _, let error):
                            refreshes.withLock { $0.append((background, error != nil)) }
                        default: break
                        }
                    }
                }
                // Before the margin; inside it (the token has 200 s left); past the old token's expiry.
                for advance in [0.0, 3400, 0, 300] {
                    clock.advance(by: advance)
                    try await withThrowingTaskGroup { group in
                        for _ in 0..<250 {
                            group.addTask { _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) }
                        }
                        try await group.waitForAll()
                    }
                    if advance == 3400 { #expect(await eventually { refreshes.withLock { $0.count } == 1 }) }
                }
                await service.shutdown()
                await counting.value
                #expect(waits.withLock { $0 } == 0)
                let done = refreshes.withLock { $0 }
                #expect(done.count == 1 && done[0].background && !done[0].failed)
            }
            #expect(server.tokens.refreshCount == 2) // the first token, and one background refresh
        }
    }

    /// A background refresh that fails (the refresh token was revoked meanwhile) keeps the token
    /// that still works: queries go on without waiting, and the failure is told, not thrown.
    @Test func aFailedBackgroundRefreshKeepsTheWorkingToken() async throws {
        try await withTestServer { server in
            let clock = MovableNow()
            let configuration = try refreshingConfiguration(server, clock: clock)
            try await withCheckedService(configuration: configuration) { service in
                _ = try await service.execute(AuthFixtures.protectedNote("note-0001"))
                let failures = LockedValue<[String]>([])
                let events = service.events
                let watching = Task {
                    for await event in events {
                        if case .credentialsRefreshed(_, _, true, _, let error?) = event { failures.withLock { $0.append(error) } }
                    }
                }
                server.tokens.failNext(.invalidGrant)
                clock.advance(by: 3500)
                for _ in 0..<20 { _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) }
                #expect(await eventually { failures.withLock { $0.count } == 1 })
                for _ in 0..<20 { _ = try await service.execute(AuthFixtures.protectedNote("note-0001")) } // still the old token
                await service.shutdown()
                await watching.value
                #expect(failures.withLock { $0 }.first?.contains("invalidGrant") == true)
            }
            #expect(server.tokens.requestCount >= 2) // the first token, the failed refresh (and any after the backoff)
        }
    }

    // MARK: The state machine

    let start = Date(timeIntervalSince1970: 1_000_000)

    /// A service whose tokens come from `server`'s token endpoint through a refresh token, on
    /// `clock`; the server holds one note.
    func refreshingConfiguration(_ server: TestServer, clock: MovableNow) throws -> ServiceActor.Configuration {
        server.notes.seed(count: 1)
        server.tokens.registerClient(id: AuthFixtures.clientID, secret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken)
        var configuration = ServiceActor.Configuration.testing(server.baseURL)
        configuration.auth.authorizer = try OAuth2RefreshTokenAuthorizer(
            clientID: AuthFixtures.clientID, clientSecret: AuthFixtures.clientSecret, refreshToken: AuthFixtures.refreshToken,
            scopes: ["notes.read"], tokenURL: server.url("/token"), now: clock.now)
        return configuration
    }

    func token(expiringIn seconds: TimeInterval, from now: Date) -> AccessToken {
        AccessToken(value: "t-\(seconds)", expiresAt: now.addingTimeInterval(seconds))
    }

    @Test func staleTokensAreUsedWhileOneBackgroundRefreshRuns() {
        var machine = TokenRefreshStateMachine(policy: .default)
        #expect(machine.requestToken(at: start) == .wait(startRefresh: true))
        #expect(machine.requestToken(at: start) == .wait(startRefresh: false))
        let first = token(expiringIn: 3600, from: start)
        machine.refreshSucceeded(first, at: start)
        #expect(machine.requestToken(at: start.addingTimeInterval(3000)) == .use(first))
        // 3 min 45 s before expiry it is stale: the first request starts a refresh, the rest just use it.
        let stale = start.addingTimeInterval(3600 - 200)
        #expect(machine.usable(at: stale) == nil)
        #expect(machine.requestToken(at: stale) == .useAndRefresh(first))
        #expect(machine.requestToken(at: stale) == .use(first))
        // Within 10 s of expiry nothing uses it: requests join the running refresh.
        #expect(machine.requestToken(at: start.addingTimeInterval(3595)) == .wait(startRefresh: false))
    }

    @Test func aFailedBackgroundRefreshKeepsTheTokenAndBacksOff() {
        var machine = TokenRefreshStateMachine(policy: .default)
        let first = token(expiringIn: 3600, from: start)
        machine.refreshSucceeded(first, at: start)
        let stale = start.addingTimeInterval(3500)
        #expect(machine.requestToken(at: stale) == .useAndRefresh(first))
        machine.refreshFailed(at: stale)
        #expect(machine.requestToken(at: stale) == .use(first)) // kept, no immediate retry
        #expect(machine.requestToken(at: stale.addingTimeInterval(1.5)) == .useAndRefresh(first)) // after the backoff
        machine.refreshFailed(at: stale.addingTimeInterval(1.5))
        #expect(machine.requestToken(at: stale.addingTimeInterval(3)) == .use(first)) // the backoff doubled
        #expect(machine.requestToken(at: stale.addingTimeInterval(4)) == .useAndRefresh(first))
    }

    @Test func shortLivedTokensRefreshAtHalfTheirLife() {
        var machine = TokenRefreshStateMachine(policy: .default)
        let brief = token(expiringIn: 60, from: start)
        machine.refreshSucceeded(brief, at: start)
        #expect(machine.requestToken(at: start.addingTimeInterval(20)) == .use(brief))
        #expect(machine.requestToken(at: start.addingTimeInterval(31)) == .useAndRefresh(brief))
    }

    @Test func withoutBackgroundRefreshRequestsWaitAtExpiry() {
        var machine = TokenRefreshStateMachine(policy: TokenRefresh(background: false))
        let first = token(expiringIn: 3600, from: start)
        machine.refreshSucceeded(first, at: start)
        #expect(machine.requestToken(at: start.addingTimeInterval(3500)) == .use(first))
        #expect(machine.requestToken(at: start.addingTimeInterval(3595)) == .wait(startRefresh: true))
    }
}
