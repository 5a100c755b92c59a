import Foundation

/// When a cached token is refreshed, as a value.
///
/// A token is **fresh** until `refreshBefore` its expiry, then **stale**: it is still used, and
/// the first request that finds it stale starts one refresh in the background, so no request
/// waits. Only a token within `expireBefore` of its expiry (or none) makes requests wait. Google's
/// auth libraries use the same 3 min 45 s margin (Python's `REFRESH_THRESHOLD`, Go's
/// `defaultExpiryDelta`).
///
/// ```swift
/// let refresh = TokenRefresh(refreshBefore: .seconds(300))   // start refreshing 5 minutes ahead
/// let authorizer = try ServiceAccountAuthorizer(keyFile: url, scopes: scopes, refresh: refresh)
/// ```
public struct TokenRefresh: Sendable, Hashable {
    /// A token this close to its expiry is refreshed in the background. For short-lived tokens
    /// at most half their lifetime is used, so a 60-second token is not refreshed on every request.
    public var refreshBefore: Duration
    /// A token this close to its expiry is not used: requests wait for a new one. Covers clock
    /// skew and the time a request takes to reach the server.
    public var expireBefore: Duration
    /// Refresh stale tokens in the background; false refreshes only when they expire (every
    /// request then waits at each expiry, as GTLR does).
    public var background: Bool

    public init(refreshBefore: Duration = .seconds(225), expireBefore: Duration = .seconds(10), background: Bool = true) {
        self.refreshBefore = refreshBefore
        self.expireBefore = expireBefore
        self.background = background
    }

    public static let `default` = TokenRefresh()
}

/// The decisions of a token cache, with no IO and no clock of its own: what a request for a
/// token does now, and what a finished refresh leaves behind.
struct TokenRefreshStateMachine: Sendable {
    enum Freshness: Equatable { case fresh, stale, expired }

    /// What a request for a token does.
    enum TokenAction: Equatable {
        /// Use this token.
        case use(AccessToken)
        /// Use this token, and start a background refresh (it is stale).
        case useAndRefresh(AccessToken)
        /// Wait for a token; start the refresh unless one is running.
        case wait(startRefresh: Bool)
    }

    let policy: TokenRefresh
    /// The retry delays after a failed background refresh: the service's policy's ceilings.
    let backoff: RetryPolicy
    private(set) var current: AccessToken?
    /// When `current` was obtained, for its lifetime.
    private var obtainedAt: Date?
    private(set) var refreshing = false
    /// A failed background refresh is not started again before this.
    private var retryNotBefore: Date?
    private var failures = 0

    init(policy: TokenRefresh, backoff: RetryPolicy = .default) {
        self.policy = policy
        self.backoff = backoff
    }

    func freshness(of token: AccessToken, obtainedAt: Date?, at now: Date) -> Freshness {
        guard let expiresAt = token.expiresAt else { return .fresh }
        let remaining = expiresAt.timeIntervalSince(now)
        if remaining <= policy.expireBefore.seconds { return .expired }
        var margin = policy.refreshBefore.seconds
        if let obtainedAt { margin = min(margin, expiresAt.timeIntervalSince(obtainedAt) / 2) }
        return remaining <= margin ? .stale : .fresh
    }

    /// The token a request can use right now without waiting, if any (the lock-free fast path
    /// of a fresh token skips the rest).
    func usable(at now: Date) -> AccessToken? {
        guard let current, freshness(of: current, obtainedAt: obtainedAt, at: now) == .fresh else { return nil }
        return current
    }

    mutating func requestToken(at now: Date) -> TokenAction {
        if let current {
            switch freshness(of: current, obtainedAt: obtainedAt, at: now) {
            case .fresh:
                return .use(current)
            case .stale:
                guard policy.background, !refreshing, retryNotBefore.map({ now >= $0 }) ?? true else { return .use(current) }
                refreshing = true
                return .useAndRefresh(current)
            case .expired:
                break
            }
        }
        defer { refreshing = true }
        return .wait(startRefresh: !refreshing)
    }

    mutating func refreshSucceeded(_ token: AccessToken, at now: Date) {
        current = token
        obtainedAt = now
        refreshing = false
        failures = 0
        retryNotBefore = nil
    }

    /// A failed refresh keeps a token that is still usable; the next background attempt waits
    /// the retry policy's growing delay, so a failing endpoint is not called on every request.
    mutating func refreshFailed(at now: Date) {
        refreshing = false
        failures += 1
        let ceiling = backoff.initialDelay.upperBound * pow(backoff.multiplier, Double(failures - 1))
        retryNotBefore = now.addingTimeInterval(max(1, min(ceiling, backoff.maxDelay.seconds)))
    }

    /// Drops the token if it is the rejected one (`nil`: whatever is held); a newer one is kept.
    mutating func invalidate(rejected value: String?) {
        if value == nil || current?.value == value {
            current = nil
            obtainedAt = nil
        }
    }

    /// Uses `token` (from a store) unless one is already held.
    mutating func seed(_ token: AccessToken) {
        if current == nil { current = token }
    }
}
