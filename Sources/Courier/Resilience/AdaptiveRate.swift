/// One rate limit as a pure value: a token bucket whose rate follows the server's throttling.
/// Times are readings of the service's clock since an arbitrary origin; the shell
/// (``RateLimiter``) reads the clock, waits and wakes waiters.
///
/// Adaptation (AIMD, quota-aware):
/// - **decrease** on a throttled answer, at most once per window and only for requests
///   admitted after the last decrease (answers to requests sent at the old rate say nothing
///   about the new one): to 90 % of the rate, or to 95 % of what the server accepted over the
///   last window if that is lower (when a burst met an exhausted quota, the accepted count *is*
///   the quota, and the rate lands just below it in one step rather than many); to half the
///   rate when nothing was accepted (the quota may have been used up by others);
/// - **increase** by a fixed step, 5 % of the rate after the last decrease, after each window
///   in which requests waited for tokens and none was throttled, up to the configured rate.
///   The step is what the rate can overshoot the server's quota by before the next decrease.
struct AdaptiveRate: Sendable {
    enum Signal: Sendable { case accepted, throttled }

    struct Change: Sendable, Equatable {
        let from: Double
        let to: Double
        let throttled: Bool
    }

    let limit: RateLimit
    private(set) var rate: Double
    private var tokens: Double
    private var refilled: Duration
    private(set) var throttledCount = 0

    private var windowStart: Duration
    private var acceptedThisWindow = 0
    private var acceptedLastWindow = 0
    private var throttledThisWindow = false
    private var waitedThisWindow = false
    private var lastDecrease: Duration?
    private var step: Double

    static let decreaseFactor = 0.9
    static let emptyWindowFactor = 0.5
    static let acceptedMargin = 0.95
    static let increaseFraction = 0.05

    init(limit: RateLimit, now: Duration) {
        self.limit = limit
        rate = limit.requestsPerSecond
        tokens = limit.capacity(at: limit.requestsPerSecond)
        refilled = now
        windowStart = now
        step = limit.requestsPerSecond * Self.increaseFraction
    }

    /// Takes a token: nil when one was there, or how long until one will be.
    mutating func take(now: Duration) -> Duration? {
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        waitedThisWindow = true
        // At most 10⁹ s: a rate the caller set to 1e-300 (validated only as above zero) would
        // make a Duration of 1e300 s, which traps.
        return .seconds(min((1 - tokens) / rate, 1e9))
    }

    /// Reports an answer to a request admitted at `admitted`; returns the rate's change, if any.
    mutating func observe(_ signal: Signal, admitted: Duration, now: Duration) -> Change? {
        var change = roll(now: now)
        switch signal {
        case .accepted:
            acceptedThisWindow += 1
        case .throttled:
            throttledCount += 1
            throttledThisWindow = true
            guard limit.adaptive else { break }
            if let last = lastDecrease, admitted < last || now - last < limit.window { break }
            let before = rate
            let accepted = acceptedInLastWindow(now: now)
            // Nothing accepted says nothing about the quota (others may have used it up): halve.
            let target = accepted > 0 ? min(rate * Self.decreaseFactor, accepted / limit.window.seconds * Self.acceptedMargin)
                : rate * Self.emptyWindowFactor
            rate = max(limit.minimumRequestsPerSecond, target)
            // No saved-up burst at the old rate.
            tokens = min(tokens, 1)
            lastDecrease = now
            step = max(rate * Self.increaseFraction, limit.minimumRequestsPerSecond * Self.increaseFraction)
            change = Change(from: before, to: rate, throttled: true)
        }
        return change
    }

    /// Closes the windows that ended before `now`, raising the rate after a window that wanted
    /// more and was not throttled.
    mutating func roll(now: Duration) -> Change? {
        guard now - windowStart >= limit.window else { return nil }
        var change: Change?
        if limit.adaptive, waitedThisWindow, !throttledThisWindow, rate < limit.requestsPerSecond {
            let before = rate
            refill(now: now) // tokens earned at the old rate stay earned at it
            rate = min(limit.requestsPerSecond, rate + step)
            change = Change(from: before, to: rate, throttled: false)
        }
        // At least one: a window validated positive, and never a division that traps.
        let ratio = (now - windowStart).seconds / max(limit.window.seconds, 1e-9)
        let elapsedWindows = ratio.isFinite ? max(1, Int(min(ratio, 1e9))) : 1
        acceptedLastWindow = elapsedWindows == 1 ? acceptedThisWindow : 0
        acceptedThisWindow = 0
        throttledThisWindow = false
        waitedThisWindow = false
        windowStart += limit.window * elapsedWindows
        return change
    }

    /// Accepted answers over the window that ends now: this window's, and the part of the last
    /// one that falls inside.
    private func acceptedInLastWindow(now: Duration) -> Double {
        let fraction = min(1, max(0, (now - windowStart).seconds / limit.window.seconds))
        return Double(acceptedThisWindow) + Double(acceptedLastWindow) * (1 - fraction)
    }

    private mutating func refill(now: Duration) {
        guard now > refilled else { return }
        tokens = min(limit.capacity(at: rate), tokens + (now - refilled).seconds * rate)
        refilled = now
    }
}
