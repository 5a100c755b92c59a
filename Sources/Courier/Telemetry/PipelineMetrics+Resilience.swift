import Metrics

/// Metrics of rate limits, circuits, the ETag cache and coalescing (Docs/Pipeline.md lists them):
///
/// - `courier_rate_limit_requests_per_second` (gauge, `key`): each limit's current rate;
/// - `courier_rate_limit_queued` (gauge, `key`): requests waiting for a token;
/// - `courier_rate_limit_wait_seconds` (timer, `key`): how long requests that waited, waited;
/// - `courier_rate_limit_throttled_total` (`key`): answers that said "slow down";
/// - `courier_circuit_state` (gauge, `host`): 0 closed, 1 half-open, 2 open;
/// - `courier_circuit_rejected_total` (`host`): requests failed fast by an open circuit;
/// - `courier_cache_requests_total` (`result`: `hit` a 304 served from the cache, `modified` a
///   revalidation that brought a new answer, `miss` nothing cached);
/// - `courier_cache_bytes` (gauge): bodies held by the cache;
/// - `courier_coalesced_requests_total`: GETs that shared another's request.
extension PipelineMetrics {
    enum CacheResult: String { case hit, miss, modified }

    func rateLimitRate(key: String, _ rate: Double) {
        guard let factory else { return }
        Gauge(label: "courier_rate_limit_requests_per_second", dimensions: [("key", key)], factory: factory).record(rate)
    }

    func rateLimitQueued(key: String, _ queued: Int) {
        guard let factory else { return }
        Gauge(label: "courier_rate_limit_queued", dimensions: [("key", key)], factory: factory).record(queued)
    }

    func rateLimitWait(key: String, _ waited: Duration) {
        guard let factory else { return }
        Timer(label: "courier_rate_limit_wait_seconds", dimensions: [("key", key)], factory: factory)
            .recordNanoseconds(waited.nanoseconds)
    }

    func rateLimitThrottled(key: String) {
        guard let factory else { return }
        Counter(label: "courier_rate_limit_throttled_total", dimensions: [("key", key)], factory: factory).increment()
    }

    func circuitState(host: String, _ state: CircuitState) {
        guard let factory else { return }
        let value = switch state {
        case .closed: 0
        case .halfOpen: 1
        case .open: 2
        }
        Gauge(label: "courier_circuit_state", dimensions: [("host", host)], factory: factory).record(value)
    }

    func circuitRejected(host: String) {
        guard let factory else { return }
        Counter(label: "courier_circuit_rejected_total", dimensions: [("host", host)], factory: factory).increment()
    }

    func cacheLookup(_ result: CacheResult) {
        guard let factory else { return }
        Counter(label: "courier_cache_requests_total", dimensions: [("result", result.rawValue)], factory: factory).increment()
    }

    func cacheBytes(_ bytes: Int) {
        guard let factory else { return }
        Gauge(label: "courier_cache_bytes", factory: factory).record(bytes)
    }

    func coalesced() {
        guard let factory else { return }
        Counter(label: "courier_coalesced_requests_total", factory: factory).increment()
    }
}
