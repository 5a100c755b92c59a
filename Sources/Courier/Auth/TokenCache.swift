import CourierSync
import Foundation
import Synchronization

/// Holds the current access token and refreshes it single-flight: however many requests find
/// it expired at once, one refresh runs and all of them wait for it.
///
/// A valid token is returned under a lock without suspending. The refresh is an unstructured
/// task, so the first caller being cancelled does not cancel everybody's refresh.
final class TokenCache: Sendable {
    private struct State {
        var current: AccessToken?
        var refreshing: Task<AccessToken, any Error>?
    }

    private let state = LockedValue(State())
    private let skew: Duration
    private let now: @Sendable () -> Date
    private let fetch: @Sendable () async throws -> AccessToken

    init(skew: Duration, now: @escaping @Sendable () -> Date, fetch: @escaping @Sendable () async throws -> AccessToken) {
        self.skew = skew
        self.now = now
        self.fetch = fetch
    }

    /// A token valid for at least `skew` more, refreshing if needed.
    func token() async throws -> AccessToken {
        let (valid, refresh) = state.withLock { state -> (AccessToken?, Task<AccessToken, any Error>?) in
            if let current = state.current, current.isValid(at: now(), skew: skew) { return (current, nil) }
            if let refreshing = state.refreshing { return (nil, refreshing) }
            let fetch = self.fetch
            let task = Task { try await fetch() }
            state.refreshing = task
            return (nil, task)
        }
        if let valid { return valid }
        guard let refresh else { throw AuthError(.tokenEndpoint, message: "no token") }
        do {
            let token = try await refresh.value
            state.withLock { state in
                if state.refreshing == refresh {
                    state.current = token
                    state.refreshing = nil
                }
            }
            return token
        } catch {
            state.withLock { state in if state.refreshing == refresh { state.refreshing = nil } }
            throw error
        }
    }

    /// Drops the token if it is the one that was rejected; a newer one is kept.
    func invalidate(rejected value: String?) {
        state.withLock { state in
            if value == nil || state.current?.value == value { state.current = nil }
        }
    }

    /// Uses `token` (from a store) unless one is already held.
    func seed(_ token: AccessToken) {
        state.withLock { state in if state.current == nil { state.current = token } }
    }
}

extension HTTPRequest {
    /// The bearer token this request carries, if any.
    var bearerToken: String? {
        guard let header = headers["Authorization"], header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}
