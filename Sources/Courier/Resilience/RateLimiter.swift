import CourierSync

/// The service's rate limits (``ServiceActor/Configuration/Limits-swift.struct/rateLimits``): a bucket per key, each
/// an ``AdaptiveRate`` with the requests waiting for its tokens. A request takes a token before
/// each attempt (before the concurrency limiter, so waiting for a token holds no slot); the
/// attempt's answer is reported back and adapts the rate.
///
/// While requests wait, one task per bucket releases them in arrival order at the bucket's
/// current rate, sleeping on the service's clock; it ends when its queue is empty.
final class RateLimiter: Sendable {
    private struct Bucket: Sendable {
        var rate: AdaptiveRate
        var waiters = WaiterQueue()
        var releasing = false
    }

    let limits: RateLimits
    private let time: ServiceTime
    private let buckets = LockedValue<[String: LockedValue<Bucket>]>([:])
    private let events: EventHub
    private let metrics: PipelineMetrics

    init(_ limits: RateLimits, time: ServiceTime, events: EventHub, metrics: PipelineMetrics) {
        self.limits = limits
        self.time = time
        self.events = events
        self.metrics = metrics
    }

    /// The key of a request: its own, or by the scope.
    func key(explicit: String?, api: String?, host: String) -> String {
        if let explicit { return explicit }
        switch limits.scope {
        case .service: return "service"
        case .host: return host
        case .api: return api ?? host
        }
    }

    /// Waits for a token of `key`'s bucket (cancellably, in arrival order); returns the clock
    /// reading at admission, to be handed back with the answer.
    func acquire(_ key: String) async throws -> Duration {
        let bucket = bucket(key)
        let now = time.now()
        var queued = false
        try await bucket.wait(in: \.waiters) { state in
            state.waiters.isEmpty && state.rate.take(now: now) == nil
        } enqueued: { state in
            queued = true
            metrics.rateLimitQueued(key: key, state.waiters.count)
            guard !state.releasing else { return }
            state.releasing = true
            Task { [bucket] in await self.release(key, bucket: bucket) }
        }
        guard queued else { return now }
        let admitted = time.now()
        metrics.rateLimitWait(key: key, admitted - now)
        return admitted
    }

    /// Reports the answer to a request admitted at `admitted`.
    func observe(_ key: String, throttled: Bool, admitted: Duration) {
        let bucket = bucket(key)
        let now = time.now()
        let (change, queued) = bucket.withLock { bucket in
            (bucket.rate.observe(throttled ? .throttled : .accepted, admitted: admitted, now: now), bucket.waiters.count)
        }
        if throttled { metrics.rateLimitThrottled(key: key) }
        if let change { changed(key, change, queued: queued) }
    }

    /// Every bucket right now.
    func status() -> [RateLimitStatus] {
        let all = buckets.withLock { $0 }
        return all.map { key, bucket in
            bucket.withLock {
                RateLimitStatus(key: key, requestsPerSecond: $0.rate.rate, queued: $0.waiters.count,
                                throttled: $0.rate.throttledCount)
            }
        }.sorted { $0.key < $1.key }
    }

    /// Fails every waiting request with `error` (the service is shutting down).
    func failWaiters(with error: TransportError) {
        let all = buckets.withLock { Array($0.values) }
        for bucket in all {
            for waiter in bucket.withLock({ $0.waiters.removeAll() }) { waiter.resume(throwing: error) }
        }
    }

    private func bucket(_ key: String) -> LockedValue<Bucket> {
        buckets.withLock { buckets in
            if let bucket = buckets[key] { return bucket }
            let made = LockedValue(Bucket(rate: AdaptiveRate(limit: limits.limit(for: key), now: time.now())))
            buckets[key] = made
            metrics.rateLimitRate(key: key, made.withLock { $0.rate.rate })
            return made
        }
    }

    /// Releases `key`'s waiters as tokens come, until none waits.
    private func release(_ key: String, bucket: LockedValue<Bucket>) async {
        while true {
            var released: [WaiterQueue.Continuation] = []
            let (delay, change, queued) = bucket.withLock { bucket -> (Duration?, AdaptiveRate.Change?, Int) in
                let now = time.now()
                let change = bucket.rate.roll(now: now)
                while !bucket.waiters.isEmpty {
                    if let delay = bucket.rate.take(now: now) { return (delay, change, bucket.waiters.count) }
                    if let waiter = bucket.waiters.popFirst() { released.append(waiter) }
                }
                bucket.releasing = false
                return (nil, change, 0)
            }
            for waiter in released { waiter.resume() }
            if let change { changed(key, change, queued: queued) }
            metrics.rateLimitQueued(key: key, queued)
            guard let delay else { return }
            // This task is nobody's: nothing cancels it, and a clock that throws only ends a wait early.
            try? await time.sleep(delay)
        }
    }

    private func changed(_ key: String, _ change: AdaptiveRate.Change, queued: Int) {
        metrics.rateLimitRate(key: key, change.to)
        events.emit(.rateLimitChanged(key: key, requestsPerSecond: change.to, queued: queued, throttled: change.throttled))
    }
}
