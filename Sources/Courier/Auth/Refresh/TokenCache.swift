import CourierSync
import Foundation
import Synchronization

/// Holds the current access token and refreshes it single-flight: however many requests find
/// it expired at once, one refresh runs and all of them wait for it.
///
/// A valid token is returned under a lock without suspending. The refresh is an unstructured
/// task, so no waiter's cancellation cancels everybody's refresh; each waiter's own wait is
/// cancellable, and a cancelled waiter returns at once with `CancellationError`.
final class TokenCache: Sendable {
    typealias Fetch = @Sendable (_ through: ServiceActor?) async throws -> AccessToken

    private struct State {
        var current: AccessToken?
        var refreshing = false
        var waiters: [UInt64: UnsafeContinuation<AccessToken, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = LockedValue(State())
    private let skew: Duration
    private let now: @Sendable () -> Date
    private let fetch: Fetch

    init(skew: Duration, now: @escaping @Sendable () -> Date, fetch: @escaping Fetch) {
        self.skew = skew
        self.now = now
        self.fetch = fetch
    }

    /// A token valid for at least `skew` more, refreshing through `service` if needed.
    func token(through service: ServiceActor?) async throws -> AccessToken {
        if let valid = state.withLock({ state in state.current.flatMap { $0.isValid(at: now(), skew: skew) ? $0 : nil } }) {
            return valid
        }
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<AccessToken, any Error>) in
                enum Next { case ready(AccessToken), cancelled, wait(startRefresh: Bool) }
                // Decided under the lock the cancellation handler takes (see ConcurrencyLimiter.acquire).
                let next = state.withLock { state -> Next in
                    if Task.isCancelled { return .cancelled }
                    if let current = state.current, current.isValid(at: now(), skew: skew) { return .ready(current) }
                    state.waiters[id] = continuation
                    defer { state.refreshing = true }
                    return .wait(startRefresh: !state.refreshing)
                }
                switch next {
                case .ready(let token): continuation.resume(returning: token)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait(let startRefresh): if startRefresh { refresh(through: service) }
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    private func refresh(through service: ServiceActor?) {
        let fetch = fetch
        Task {
            let result: Result<AccessToken, any Error>
            do { result = .success(try await fetch(service)) } catch { result = .failure(error) }
            let waiters = state.withLock { state -> [UnsafeContinuation<AccessToken, any Error>] in
                if case .success(let token) = result { state.current = token }
                state.refreshing = false
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume(with: result) }
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
