/// One query's retry decisions as a pure value: outcomes in, "wait this long" or "give up" out.
/// The caller does the waiting, on an injected clock, so tests never sleep.
struct RetryStateMachine: Sendable {
    enum Outcome: Sendable {
        case response(status: Int, retryAfter: Duration?)
        case transportFailure(TransportError)
    }

    enum Decision: Equatable, Sendable {
        case retry(after: Duration)
        case giveUp
    }

    let policy: RetryPolicy
    let queryName: String
    /// Whether the request's body can be sent again.
    let replayable: Bool
    private(set) var retries = 0
    private(set) var totalDelay = Duration.zero
    private var previousDelay: Duration?

    init(policy: RetryPolicy, queryName: String, replayable: Bool) {
        self.policy = policy
        self.queryName = queryName
        self.replayable = replayable
    }

    /// `random` draws the first delay's seconds from a range (injected for tests).
    mutating func decide(_ outcome: Outcome, random: (ClosedRange<Double>) -> Double = { .random(in: $0) }) -> Decision {
        guard replayable, retries < policy.maxRetries else { return .giveUp }
        let context: RetryContext
        let byRule: Bool
        var retryAfter: Duration?
        switch outcome {
        case .response(let status, let after):
            context = RetryContext(attempt: retries + 1, status: status, error: nil, queryName: queryName)
            byRule = policy.retryableStatuses.contains(status)
            retryAfter = after
        case .transportFailure(let error):
            context = RetryContext(attempt: retries + 1, status: nil, error: error, queryName: queryName)
            byRule = policy.retryTransportErrors && error.isTransient
        }
        guard policy.shouldRetry?(context) ?? byRule else { return .giveUp }

        let backoff: Duration
        if let previousDelay {
            backoff = min(previousDelay * policy.multiplier, policy.maxDelay)
        } else {
            backoff = min(.milliseconds(Int64(random(policy.initialDelay) * 1000)), policy.maxDelay)
        }
        let delay: Duration
        if let retryAfter {
            // The server knows best, but a wait longer than the cap means "not now": give up.
            guard retryAfter <= policy.maxDelay else { return .giveUp }
            delay = retryAfter
        } else {
            delay = backoff
        }
        guard totalDelay + delay <= policy.maxTotalDelay else { return .giveUp }
        retries += 1
        totalDelay += delay
        previousDelay = backoff
        return .retry(after: delay)
    }
}
