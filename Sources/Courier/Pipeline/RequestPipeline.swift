import Foundation

/// The one way from "an operation wants bytes on the wire" to "a response or a typed error".
///
/// Every request of every operation takes it, attempt after attempt (Docs/Pipeline.md draws it):
///
/// 1. the service must be running, the task not cancelled;
/// 2. the request is built (again for each attempt: a download's `Range` moves on);
/// 3. the authorizer adds credentials;
/// 4. the guards, when configured: the host's circuit, a rate-limit token, a slot of the
///    service-wide limiter; and the attempt's span, when tracing;
/// 5. the test handler answers in place of the network, or the transport sends it;
/// 6. the exchange is logged (redacted), counted (metrics) and told (events);
/// 7. an accepted status ends it; a 401 invalidates the credentials and goes again, once;
/// 8. otherwise ``RetryStateMachine`` decides, idempotency-aware, and the pipeline waits a
///    jittered, cancellable delay on the service's clock and goes again, or gives up with a
///    typed error.
struct RequestPipeline: Sendable {
    let service: ServiceActor
    let context: RequestContext


    /// Runs `prepare`'s request through `transmission` until an accepted answer, a final failure,
    /// or cancellation.
    ///
    /// The failure paths are functions of their own, never inlined: an async function's frame
    /// holds every local of everything inlined into it, and this frame lives as long as the
    /// request is in flight. Inlined, the retry and logging paths made it 12 KB per request.
    /// For the same reason no typed error or response head is a local here: each would be a
    /// slot of the frame (`checkAccepting`'s typed error alone took two of 57 bytes), and the
    /// frames of a waiting query fill task-allocator slabs of 984 bytes.
    nonisolated(nonsending) func run<T: Transmission>(_ transmission: T,
                                                      prepare: () throws -> HTTPRequest) async throws -> T.Output {
        var state = AttemptState()
        while true {
            try Task.checkCancellation()
            try checkAccepting()
            // Checked here, not only in `finished`: calling an async function costs its frame's
            // allocation even when it returns at once, and most requests of a service without
            // an authorizer would pay it for nothing.
            let request = needsFinishing ? try await finished(try prepare(), state: &state) : try prepare()
            let attemptStarted = MonotonicClock.nanoseconds()
            if state.started == 0 { state.started = attemptStarted }
            let output: T.Output
            let kept = transmission.bytesKept()
            do {
                output = try await attempt(request, transmission)
            } catch {
                if transmission.bytesKept() - kept >= AttemptState.progressEarningABudget {
                    // The attempt moved the data on before it failed: the link works, and the
                    // next attempt resumes from there. The retry budget (count, waits, deadline)
                    // starts again now, as google-cloud-go's reader gets a fresh one on each
                    // reopen; otherwise a download longer than the deadline survives no reset.
                    state.madeProgress()
                }
                recordFailure(request, error: error, since: attemptStarted)
                try await retryOrThrow(error, request: request, state: &state)
                continue
            }
            if accepted(output, request: request, transmission: transmission, since: attemptStarted) { return output }
            if let final = try await refused(output, request: request, transmission: transmission, state: &state) {
                return final
            }
        }
    }

    /// The service's accepting check, with an untyped error (see `run`).
    @inline(never)
    private func checkAccepting() throws {
        try service.checkAccepting()
    }

    /// Records an answer and tells whether the caller takes its status.
    @inline(never)
    private func accepted<T: Transmission>(_ output: T.Output, request: HTTPRequest, transmission: T, since start: UInt64)
        -> Bool
    {
        let head = transmission.head(of: output)
        record(request, head: head, body: transmission.body(of: output), error: nil, since: start)
        return context.accepts(head.status)
    }

    @inline(never)
    private func recordFailure(_ request: HTTPRequest, error: any Error, since start: UInt64) {
        record(request, head: nil, body: nil, error: error, since: start)
    }

    /// What one request's attempts have used up so far; also the budget of a protocol that
    /// recovers above single requests (a resumable upload's session, a wire batch's part).
    struct AttemptState: Sendable {
        /// The policy and the retry machine, boxed: they are about 300 bytes, and this state sits
        /// in `run`'s frame for as long as a request is in flight, while most requests never
        /// retry. Copy-on-write, so the state keeps value semantics.
        private final class Budget: @unchecked Sendable {
            var policy: RetryPolicy?
            var retry: RetryStateMachine?
            /// The request's invocation headers, for a request that sends them (Cloud Storage's).
            var invocation: InvocationHeaders?

            init(policy: RetryPolicy?, retry: RetryStateMachine?, invocation: InvocationHeaders? = nil) {
                self.policy = policy
                self.retry = retry
                self.invocation = invocation
            }
        }

        private var budget: Budget?
        var refreshedCredentials = false
        /// When the first attempt began, for the deadline.
        var started: UInt64 = 0

        /// - Parameter started: When the deadline starts counting; 0: at the first decision.
        init(policy: RetryPolicy? = nil, started: UInt64 = 0) {
            if let policy { budget = Budget(policy: policy, retry: nil) }
            self.started = started
        }

        /// Overrides the operation's policy (a wire batch's part keeps its own query's).
        var policy: RetryPolicy? { budget?.policy }

        /// Made at the first failure: the plain path copies no policy.
        var retry: RetryStateMachine? {
            get { budget?.retry }
            set {
                if isKnownUniquelyReferenced(&budget) {
                    budget!.retry = newValue
                } else {
                    budget = Budget(policy: budget?.policy, retry: newValue, invocation: budget?.invocation)
                }
            }
        }

        /// `request` with the invocation headers of its next attempt: the same ID on every
        /// attempt of this request, the attempt counted from 1 (a credential refresh's re-send
        /// included, as it is one more attempt on the wire). Out of line: `run`'s frame lives
        /// while the request is in flight.
        @inline(never)
        mutating func stamp(_ request: HTTPRequest) -> HTTPRequest {
            if budget == nil {
                budget = Budget(policy: nil, retry: nil)
            } else if !isKnownUniquelyReferenced(&budget) {
                budget = Budget(policy: budget?.policy, retry: budget?.retry, invocation: budget?.invocation)
            }
            return InvocationHeaders.stamp(request, continuing: &budget!.invocation)
        }

        /// Retries decided so far.
        var retries: Int { retry?.retries ?? 0 }

        /// The data a failed attempt must have kept to earn a fresh budget. A floor, so a server
        /// that fails every answer after a shrinking part of it (half of what is left, say)
        /// still meets the policy's limits, and one that keeps giving this much ends the data
        /// in at most size / 1 MiB attempts.
        static let progressEarningABudget: Int64 = 1 << 20

        /// A fresh retry budget, its deadline counting from now, after an attempt that made
        /// progress; a credential refresh stays spent.
        mutating func madeProgress() {
            retry = nil
            started = MonotonicClock.nanoseconds()
        }
    }

    /// The one retry decision: how long to wait before going again, or nil to give up.
    func decide(_ outcome: RetryStateMachine.Outcome, idempotent: Bool, replayable: Bool = true,
                state: inout AttemptState) -> Duration? {
        if state.started == 0 { state.started = MonotonicClock.nanoseconds() }
        var machine = state.retry ?? RetryStateMachine(policy: state.policy ?? context.retry, queryName: context.name)
        let decision = machine.decide(outcome, idempotent: idempotent, replayable: replayable,
                                      elapsed: Self.elapsed(since: state.started))
        state.retry = machine
        guard case .retry(let delay) = decision else { return nil }
        return delay
    }

    /// A failure below HTTP: waits to retry, or throws it.
    @inline(never)
    private nonisolated(nonsending) func retryOrThrow(_ error: any Error, request: HTTPRequest, state: inout AttemptState)
        async throws
    {
        guard let error = error as? TransportError,
              let delay = decide(.transportFailure(error), idempotent: request.isIdempotent,
                                 replayable: request.body.isReplayable, state: &state)
        else { throw error }
        try await wait(delay, attempt: state.retries, reason: "\(error)", status: nil)
    }

    /// A status the caller does not take: refreshes credentials once after a 401, or waits to
    /// retry (nil: go again), or gives up with ``APIError`` or, for raw requests, the answer.
    @inline(never)
    private nonisolated(nonsending) func refused<T: Transmission>(_ output: T.Output, request: HTTPRequest,
                                                                 transmission: T, state: inout AttemptState)
        async throws -> T.Output?
    {
        let head = transmission.head(of: output)
        let configuration = service.configuration
        if head.status == 401, context.authorize, let authorizer = configuration.auth.authorizer, !state.refreshedCredentials {
            state.refreshedCredentials = true
            configuration.telemetry.logger.debug("credentials refused; refreshing them once", metadata: Redaction.metadata([
                "query": "\(context.name)", "request-id": "\(context.requestID)",
            ]))
            await authorizer.invalidate(request)
            return nil
        }
        let (response, settled) = try await transmission.settle(output)
        let outcome = RetryStateMachine.Outcome.response(
            status: head.status, retryAfter: RetryAfter.parse(head.headers["Retry-After"]),
            reasons: GoogleErrorReasons.of(status: head.status, body: response.body))
        guard let delay = decide(outcome, idempotent: request.isIdempotent, replayable: request.body.isReplayable, state: &state)
        else {
            if context.throwsRefusedStatus { throw APIError(response: response, requestID: context.requestID) }
            return settled
        }
        try await wait(delay, attempt: state.retries, reason: "HTTP \(head.status)", status: head.status)
        return nil
    }

    /// The authorizer this operation's requests go through, if any: the one condition both
    /// `run`'s check and ``authorized(_:)`` read.
    private var authorizer: (any Authorizer)? { context.authorize ? service.configuration.auth.authorizer : nil }

    /// Whether ``authorized(_:)`` has anything to do for this operation.
    var needsAuthorization: Bool { authorizer != nil }

    /// Whether ``finished(_:state:)`` has anything to do for this operation's attempts.
    private var needsFinishing: Bool { context.stampsInvocation || needsAuthorization }

    /// The attempt's request as it goes out: with Cloud Storage's invocation headers when its
    /// operation sends them (before credentials, so a signature covers them), then authorized.
    /// Out of line and only when there is something to do, for the reasons `run` and
    /// ``authorized(_:)`` give; a request variable changed in `run` took 16 more bytes of its
    /// frame.
    @inline(never)
    private nonisolated(nonsending) func finished(_ request: HTTPRequest, state: inout AttemptState) async throws
        -> HTTPRequest
    {
        let stamped = context.stampsInvocation ? state.stamp(request) : request
        return needsAuthorization ? try await authorized(stamped) : stamped
    }

    /// `request` with the authorizer's credentials, when this operation is authorized. Out of
    /// line: inlined into `run`, whose frame lives while the request is in flight, it added
    /// 1 KB to every waiting request (measured from the binary's async function records).
    @inline(never)
    nonisolated(nonsending) func authorized(_ request: HTTPRequest) async throws -> HTTPRequest {
        guard let authorizer else { return request }
        let authorization = AuthorizationContext(service: service, request: context)
        // Before any credential is obtained or added: a token of one universe is sent to no other.
        let universe = try await authorizer.universeDomain(context: authorization)
        guard universe == service.universeDomain else {
            throw AuthError(.universeMismatch, message: "the service works in \(service.universeDomain) and its credentials belong to \(universe): "
                                + "set configuration.universeDomain (or \(UniverseDomain.environmentVariable)) to the credentials' universe; nothing was sent")
        }
        var signed = request
        try await authorizer.authorize(&signed, context: authorization)
        return signed
    }

    /// One attempt: the network, or the test handler and the guards around it when there are any.
    @inline(never)
    private nonisolated(nonsending) func attempt<T: Transmission>(_ request: HTTPRequest, _ transmission: T) async throws
        -> T.Output
    {
        if context.testHandler != nil || service.guardsAttempts {
            return try await guardedAttempt(request, transmission)
        }
        return try await transmission.send(request, through: service, tally: context.attempts)
    }

    /// The attempt behind its guards, in this order: the host's circuit (fail fast), a token of
    /// its rate limit, a slot of the concurrency limiter (so waiting for a token holds no slot);
    /// then its answer goes back to the circuit and the rate limit. Token requests pass no
    /// guard: the request waiting for its token may hold the last slot. Out of line, so the plain
    /// attempt's frame stays small.
    @inline(never)
    private nonisolated(nonsending) func guardedAttempt<T: Transmission>(_ request: HTTPRequest, _ transmission: T)
        async throws -> T.Output
    {
        guard context.limited else { return try await traced(request, transmission) }
        let host = Self.hostKey(request.url)
        var probe: Bool?
        if let circuits = service.circuitBreakers, !context.isRaw || circuits.policy.guardsRawRequests {
            probe = try circuits.admit(host)
        }
        var admission: (key: String, at: Duration)?
        do {
            if let rateLimiter = service.rateLimiter {
                let key = rateLimiter.key(explicit: context.rateLimitKey, api: context.api, host: host)
                admission = (key, try await rateLimiter.acquire(key))
            }
            // The limiter's closure is taken only when there is a limiter: a closure call is a hop.
            let output = if let limiter = service.limiter {
                try await limiter.withSlot { try await traced(request, transmission) }
            } else {
                try await traced(request, transmission)
            }
            let head = transmission.head(of: output)
            if let probe, let circuits = service.circuitBreakers {
                circuits.record(host, circuits.isFailure(status: head.status) ? .failure : .success, probe: probe)
            }
            if let admission, let rateLimiter = service.rateLimiter {
                rateLimiter.observe(admission.key, throttled: Self.isThrottled(head, body: transmission.body(of: output)),
                                    admitted: admission.at)
            }
            return output
        } catch {
            if let probe, let circuits = service.circuitBreakers {
                let failed = (error as? TransportError)?.isTransient ?? false
                circuits.record(host, failed ? .failure : .abandoned, probe: probe)
            }
            throw error
        }
    }

    /// The attempt in its span, when tracing.
    private nonisolated(nonsending) func traced<T: Transmission>(_ request: HTTPRequest, _ transmission: T) async throws
        -> T.Output
    {
        guard let tracing = service.tracing else { return try await answer(request, transmission) }
        var request = request
        let span = tracing.attempt(&request, context)
        do {
            let output = try await answer(request, transmission)
            tracing.ended(span, head: transmission.head(of: output), bodySize: transmission.body(of: output)?.count, error: nil)
            return output
        } catch {
            tracing.ended(span, head: nil, bodySize: nil, error: error)
            throw error
        }
    }

    private nonisolated(nonsending) func answer<T: Transmission>(_ request: HTTPRequest, _ transmission: T) async throws -> T.Output {
        if let testHandler = context.testHandler {
            try request.validate()
            return try await transmission.mock(request, answer: testHandler(request))
        }
        return try await transmission.send(request, through: service, tally: context.attempts)
    }

    /// What circuits and rate limits are kept per: the host and its port.
    static func hostKey(_ url: URL) -> String {
        let host = url.host ?? ""
        return url.port.map { "\(host):\($0)" } ?? host
    }

    /// An answer that says "slow down": 429, or a 403 whose Google error reason is a rate
    /// limit's (`RESOURCE_EXHAUSTED` included).
    static func isThrottled(_ head: HTTPResponseHead, body: Data?) -> Bool {
        if head.status == 429 { return true }
        guard head.status == 403, let body else { return false }
        return GoogleErrorReasons.of(status: 403, body: body).contains { $0 == "rateLimitExceeded" || $0 == "userRateLimitExceeded" }
    }

    /// Waits out a retry delay: announced, counted, cancellable (by the task, so by `cancel(requestID:)` too).
    @inline(never)
    func wait(_ delay: Duration, attempt: Int, reason: String, status: Int?) async throws {
        announceRetry(delay, attempt: attempt, reason: reason, status: status)
        try await service.configuration.testing.clock.sleep(for: delay)
    }

    /// A retry, told everywhere retries are: the debug log, the `retrying` event, the metric and
    /// the operation's tally (its span's resend count).
    private func announceRetry(_ delay: Duration, attempt: Int, reason: String, status: Int?) {
        service.configuration.telemetry.logger.debug("retrying", metadata: Redaction.metadata([
            "query": "\(context.name)", "request-id": "\(context.requestID)", "attempt": "\(attempt)",
            "delay": "\(delay)", "reason": "\(reason)",
        ]))
        service.eventHub.emit(.retrying(requestID: context.requestID, query: context.name, attempt: attempt, delay: delay,
                                        reason: reason))
        service.metrics.retry(operation: context.operation, status: status)
        context.attempts.countRetry()
    }

    /// libcurl's silent re-sends during the attempt that just ended, as retries: each sent the
    /// request again on a fresh connection after a kept-alive one closed before any response
    /// (only an idempotent request's; Docs/Pipeline.md). Told when the attempt ends, before its
    /// outcome, since curl tells nobody at the time.
    @inline(never)
    private func announceTransportResends(_ count: Int) {
        for _ in 0..<count {
            announceRetry(.zero, attempt: context.attempts.retries + 1,
                          reason: "libcurl sent the request again on a fresh connection: the kept-alive one closed before any response",
                          status: nil)
        }
    }

    @inline(never)
    private func record(_ request: HTTPRequest, head: HTTPResponseHead?, body: Data?, error: (any Error)?,
                        since start: UInt64) {
        let resends = context.attempts.takeResends()
        if resends > 0 { announceTransportResends(resends) }
        context.attempts.record(status: head?.status ?? 0)
        guard service.trafficLog != nil || service.metrics.isEnabled else { return }
        recordObserved(request, head: head, body: body, error: error, resends: resends, since: start)
    }

    @inline(never)
    private func recordObserved(_ request: HTTPRequest, head: HTTPResponseHead?, body: Data?, error: (any Error)?,
                                resends: Int, since start: UInt64) {
        let duration = Self.elapsed(since: start)
        // A credential request's successful answer is the credential: its body is never logged.
        let loggedBody = context.operation == .token && (head?.status ?? 0) < 300 ? body.map(HTTPTrafficLog.withheld) : body
        service.trafficLog?.record(name: context.name, requestID: context.requestID, request: request, head: head,
                                   body: loggedBody, error: error, resends: resends, duration: duration)
        service.metrics.attempt(operation: context.operation, request: request, head: head, body: body, error: error,
                                duration: duration)
    }

    static func elapsed(since start: UInt64) -> Duration {
        .nanoseconds(Int64(MonotonicClock.nanoseconds() &- start))
    }
}
