extension ServiceActor.Configuration {
    /// For requests a person is waiting on (a web handler calling an API): 5 s to connect, 15 s
    /// idle, and retries that give up within 10 s rather than Google's two minutes.
    public static var interactive: Self {
        var configuration = Self()
        configuration.transport.timeouts = Timeouts(connect: .seconds(5), idle: .seconds(15))
        configuration.retry.maxRetries = 3
        configuration.retry.maxDelay = .seconds(4)
        configuration.retry.deadline = .seconds(10)
        return configuration
    }

    /// For large uploads and downloads (backups, data pipelines): a 5 min idle timeout that
    /// survives a slow peer, responses up to 1 GiB buffered by `send`, and retries for up to
    /// 10 minutes, as a chunk of a long transfer is worth waiting for.
    public static var bulkTransfers: Self {
        var configuration = Self()
        configuration.transport.timeouts = Timeouts(connect: .seconds(30), idle: .seconds(300))
        configuration.transport.maxResponseBodySize = 1 << 30
        configuration.retry.maxRetries = 10
        configuration.retry.deadline = .seconds(600)
        return configuration
    }

    /// For services that call a busy backend often: a circuit breaker per host (5 failures open
    /// it for 10 s), the ETag cache with coalescing of identical GETs, and at most 256 requests
    /// in flight. Add ``Limits/rateLimits`` with your quota.
    public static var resilient: Self {
        var configuration = Self()
        configuration.limits.circuitBreaker = CircuitBreakerPolicy()
        configuration.limits.maxConcurrentQueries = 256
        configuration.queries.caching = QueryCaching()
        return configuration
    }
}
