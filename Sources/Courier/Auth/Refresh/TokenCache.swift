import CourierSync
import Foundation

/// Holds the current access token and refreshes it single-flight, in the background before it
/// expires: the IO shell around ``TokenRefreshStateMachine``.
///
/// - A fresh token is returned under a lock without suspending.
/// - A stale one is returned too; the first request to find it stale starts one background
///   refresh, through that request's service. A failed background refresh keeps the token.
/// - Only an expired token (or none) makes requests wait, and all of them wait for one refresh.
///   Each wait is cancellable: a cancelled waiter returns at once with `CancellationError`,
///   while the refresh goes on for the others (it is an unstructured task for that reason).
final class TokenCache: Sendable {
    typealias Fetch = @Sendable (_ through: ServiceActor?) async throws -> AccessToken

    private struct State {
        var machine: TokenRefreshStateMachine
        var waiters: [UInt64: UnsafeContinuation<AccessToken, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// How events and metrics name this token's source (`metadata`, `service_account`, …).
    let source: String
    private let state: LockedValue<State>
    private let now: @Sendable () -> Date
    private let fetch: Fetch

    init(source: String, refresh: TokenRefresh, now: @escaping @Sendable () -> Date, fetch: @escaping Fetch) {
        self.source = source
        state = LockedValue(State(machine: TokenRefreshStateMachine(policy: refresh)))
        self.now = now
        self.fetch = fetch
    }

    /// A usable token, refreshing through the context's service if needed (through a
    /// short-lived service when there is no context).
    func token(context: AuthorizationContext?) async throws -> AccessToken {
        let time = now()
        if let fresh = state.withLock({ $0.machine.usable(at: time) }) { return fresh }
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        var waited = false
        let token = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<AccessToken, any Error>) in
                enum Next { case ready(AccessToken), cancelled, wait(startRefresh: Bool) }
                // Decided under the lock the cancellation handler takes (see ConcurrencyLimiter.acquire).
                var background: AccessToken?
                let next = state.withLock { state -> Next in
                    if Task.isCancelled { return .cancelled }
                    switch state.machine.requestToken(at: now()) {
                    case .use(let token): return .ready(token)
                    case .useAndRefresh(let token):
                        background = token
                        return .ready(token)
                    case .wait(let startRefresh):
                        state.waiters[id] = continuation
                        return .wait(startRefresh: startRefresh)
                    }
                }
                switch next {
                case .ready(let token):
                    if background != nil { refresh(context: context, background: true) }
                    continuation.resume(returning: token)
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                case .wait(let startRefresh):
                    waited = true
                    if startRefresh { refresh(context: context, background: false) }
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
        if waited { context?.reportWaited(source: source) }
        return token
    }

    private func refresh(context: AuthorizationContext?, background: Bool) {
        let fetch = fetch
        Task {
            let started = MonotonicClock.nanoseconds()
            let result: Result<AccessToken, any Error>
            do { result = .success(try await fetch(context?.service)) } catch { result = .failure(error) }
            let time = now()
            let waiters = state.withLock { state -> [UnsafeContinuation<AccessToken, any Error>] in
                switch result {
                case .success(let token): state.machine.refreshSucceeded(token, at: time)
                case .failure: state.machine.refreshFailed(at: time)
                }
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            // Told before the waiters go on, so a subscriber sees the refresh before what follows it.
            let error: (any Error)? = if case .failure(let error) = result { error } else { nil }
            context?.reportRefresh(source: source, background: background,
                                   duration: RequestPipeline.elapsed(since: started), error: error)
            for waiter in waiters { waiter.resume(with: result) }
        }
    }

    /// Drops the token if it is the one that was rejected; a newer one is kept.
    func invalidate(rejected value: String?) {
        state.withLock { $0.machine.invalidate(rejected: value) }
    }

    /// Uses `token` (from a store) unless one is already held.
    func seed(_ token: AccessToken) {
        state.withLock { $0.machine.seed(token) }
    }
}

extension HTTPRequest {
    /// The bearer token this request carries, if any.
    var bearerToken: String? {
        guard let header = headers["Authorization"], header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst("Bearer ".count))
    }
}
