import Foundation

/// One request's retry decisions as a pure value: outcomes in, "wait this long" or "give up" out.
/// The pipeline does the waiting, on an injected clock, so tests never sleep.
struct RetryStateMachine: Sendable {
    enum Outcome: Sendable {
        /// A response the caller does not take as the answer; `reasons` are its Google error reasons.
        case response(status: Int, retryAfter: Duration?, reasons: [String])
        case transportFailure(TransportError)
    }

    enum Decision: Equatable, Sendable {
        case retry(after: Duration)
        case giveUp
    }

    let policy: RetryPolicy
    let queryName: String
    private(set) var retries = 0
    private(set) var totalDelay = Duration.zero

    init(policy: RetryPolicy, queryName: String) {
        self.policy = policy
        self.queryName = queryName
    }

    /// - Parameters:
    ///   - idempotent: Whether the request may be sent again after it may have reached the server.
    ///   - replayable: Whether its body can be sent again (a stream cannot).
    ///   - elapsed: Time since the first attempt began, for the deadline.
    ///   - random: Draws a wait from a range of seconds (injected for tests).
    mutating func decide(_ outcome: Outcome, idempotent: Bool, replayable: Bool = true, elapsed: Duration = .zero,
                         random: (ClosedRange<Double>) -> Double = { .random(in: $0) }) -> Decision {
        guard replayable, retries < policy.maxRetries else { return .giveUp }
        let context: RetryContext
        let byRule: Bool
        var retryAfter: Duration?
        switch outcome {
        case .response(let status, let after, let reasons):
            // An answer means the server had the request: only an idempotent one may go again.
            guard idempotent else { return .giveUp }
            context = RetryContext(attempt: retries + 1, status: status, error: nil, queryName: queryName, reasons: reasons)
            byRule = policy.retryableStatuses.contains(status)
                || (status == 403 && reasons.contains(where: policy.retryableReasons.contains))
            retryAfter = after
        case .transportFailure(let error):
            guard idempotent || !error.requestMayHaveBeenSent else { return .giveUp }
            context = RetryContext(attempt: retries + 1, status: nil, error: error, queryName: queryName)
            byRule = policy.retryTransportErrors && error.isTransient
        }
        guard policy.shouldRetry?(context) ?? byRule else { return .giveUp }

        let delay: Duration
        if let retryAfter {
            // The server knows best, but a wait longer than the cap means "not now": give up.
            guard retryAfter <= policy.maxDelay else { return .giveUp }
            delay = retryAfter
        } else {
            delay = jitteredBackoff(random: random)
        }
        guard totalDelay + delay <= policy.maxTotalDelay else { return .giveUp }
        if let deadline = policy.deadline, elapsed + delay > deadline { return .giveUp }
        retries += 1
        totalDelay += delay
        return .retry(after: delay)
    }

    /// Full jitter on every wait: a random point of the initial range scaled by multiplierⁿ, capped.
    ///
    /// No value of a query's own policy traps here: a scale that overflows (a multiplier of 2
    /// after a thousand retries) or a delay that is not a number waits the cap.
    private func jitteredBackoff(random: (ClosedRange<Double>) -> Double) -> Duration {
        let scale = pow(policy.multiplier, Double(retries))
        let cap = max(0, Double(policy.maxDelay.milliseconds) / 1000)
        func scaled(_ seconds: Double) -> Double {
            let value = seconds * scale
            return value.isNaN ? cap : min(max(value, 0), cap)
        }
        let lower = scaled(policy.initialDelay.lowerBound)
        let upper = max(lower, scaled(policy.initialDelay.upperBound))
        let drawn = random(lower...upper) * 1000
        return .milliseconds(Int64(saturating: drawn.isFinite ? max(drawn, 0) : cap * 1000))
    }
}

/// Google's JSON error format: `{"error": {"errors": [{"reason": "rateLimitExceeded"}], "status": …}}`.
enum GoogleErrorReasons {
    /// The reasons in `body`, read only when the status can be made transient by one (a 403).
    static func of(status: Int, body: Data) -> [String] {
        guard status == 403, !body.isEmpty, let object = try? JSONValue(parsing: body).objectValue,
              let error = object["error"]?.objectValue else { return [] }
        var reasons = (error["errors"]?.arrayValue ?? []).compactMap { $0.objectValue?["reason"]?.stringValue }
        for detail in error["details"]?.arrayValue ?? [] {
            if let reason = detail.objectValue?["reason"]?.stringValue { reasons.append(reason) }
        }
        if error["status"]?.stringValue == "RESOURCE_EXHAUSTED" { reasons.append("rateLimitExceeded") }
        return reasons
    }
}
