import Foundation
import Logging
import Synchronization

/// The entry point to Courier: an actor that owns a libcurl multi event loop and runs every
/// request as an `async` call.
///
/// The actor's executor *is* the loop thread (``CurlEventLoop``), so actor methods and libcurl's
/// callbacks run on one thread and no lock guards curl state. Create one service and share it:
/// it keeps connections alive and reuses them, and multiplexes HTTP/2.
///
/// ```swift
/// try await withService { service in
///     let response = try await service.send(HTTPRequest(url: URL(string: "http://127.0.0.1:8080/")!))
///     print(response.status, response.body.count)
/// }
/// ```
public actor ServiceActor {
    /// The configuration the service was created with.
    public nonisolated let configuration: Configuration
    /// The universe the service works in: ``Configuration/universeDomain``, else
    /// `GOOGLE_CLOUD_UNIVERSE_DOMAIN` as it was when the service started, else `googleapis.com`.
    public nonisolated let universeDomain: String
    let loop: CurlEventLoop
    /// Executions by request ID, for ``cancel(requestID:)``.
    nonisolated let requests = RequestRegistry()
    nonisolated let eventHub = EventHub()
    nonisolated let trafficLog: HTTPTrafficLog?
    /// Service-wide bound on queries talking to servers (``Configuration/Limits-swift.struct/maxConcurrentQueries``).
    nonisolated let limiter: ConcurrencyLimiter?
    nonisolated let metrics: PipelineMetrics
    /// ``Configuration/Limits-swift.struct/rateLimits``, ``Configuration/Limits-swift.struct/circuitBreaker``, ``Configuration/Queries-swift.struct/caching``
    /// and ``Configuration/Telemetry-swift.struct/tracer`` at work; nil when off.
    nonisolated let rateLimiter: RateLimiter?
    nonisolated let circuitBreakers: CircuitBreakers?
    nonisolated let queryCache: QueryCache?
    nonisolated let tracing: PipelineTracing?
    /// Whether an attempt does more than send: a limiter, a rate limit, circuits or tracing.
    /// One branch on the plain path.
    nonisolated let guardsAttempts: Bool
    /// False from the start of ``shutdown(_:)``: the pipeline then refuses new attempts, mocked ones too.
    private nonisolated let accepting = Atomic<Bool>(true)
    /// Whether ``shutdown(_:)`` has not begun yet.
    nonisolated var isAccepting: Bool { accepting.load(ordering: .acquiring) }
    private var phase = Phase.running

    enum Phase { case running, shuttingDown, stopped }

    /// Starts the event loop thread. Throws ``ConfigurationError`` naming a setting out of its
    /// range, or if libcurl or epoll cannot be set up.
    public init(configuration: Configuration = Configuration()) throws {
        try configuration.validate()
        var configuration = configuration
        universeDomain = try configuration.resolvedUniverseDomain()
        // Resolved once: the service's configuration says where its requests go.
        configuration.universeDomain = universeDomain
        self.configuration = configuration
        trafficLog = configuration.telemetry.httpLog.map(HTTPTrafficLog.init(options:))
        limiter = configuration.limits.maxConcurrentQueries.map(ConcurrencyLimiter.init(limit:))
        let metrics = PipelineMetrics(factory: configuration.telemetry.metricsFactory)
        let events = eventHub
        self.metrics = metrics
        let time = ServiceTime(configuration.testing.clock)
        rateLimiter = configuration.limits.rateLimits.map { RateLimiter($0, time: time, events: events, metrics: metrics) }
        circuitBreakers = configuration.limits.circuitBreaker.map { CircuitBreakers($0, time: time, events: events, metrics: metrics) }
        queryCache = configuration.queries.caching.map { QueryCache($0, metrics: metrics) }
        tracing = PipelineTracing(configuration.telemetry.tracer)
        guardsAttempts = limiter != nil || rateLimiter != nil || circuitBreakers != nil || tracing != nil
        let multi = try CurlMulti(settings: configuration.transportSettings, limits: configuration.limits.connections,
                                  backend: configuration.transport.loopBackend)
        loop = try CurlEventLoop(multi: multi)
        LiveObjects.created(.service)
    }

    deinit {
        LiveObjects.destroyed(.service)
        // Nobody called shutdown(): the loop still cleans curl up on its own thread.
        loop.stopFromOutside()
    }

    /// The loop thread, as this actor's serial executor.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        loop.serialExecutor.asUnownedSerialExecutor()
    }

    /// The loop thread as a `TaskExecutor`.
    ///
    /// Tasks that prefer it run on the loop thread, so sending a request and resuming with its
    /// response cost no thread hop. Use it for request-heavy code that does little work per
    /// response (load generators, proxies, fan-out); keep CPU-heavy work (large JSON decoding)
    /// off it, because while such work runs no other transfer makes progress.
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(service.executor) {
    ///     let response = try await service.send(request)
    /// }
    /// ```
    public nonisolated var executor: CurlEventLoop { loop }

    var multi: CurlMulti { loop.multi }

    /// Counters that show what the transport holds right now.
    public var stats: TransportStats { multi.stats }

    /// Each rate limit's current rate, queue and throttled answers (``Configuration/Limits-swift.struct/rateLimits``);
    /// empty without rate limits.
    public nonisolated func rateLimitStatus() -> [RateLimitStatus] {
        rateLimiter?.status() ?? []
    }

    /// The state of `host`'s circuit (``Configuration/Limits-swift.struct/circuitBreaker``): the URL's host, with
    /// `:port` when the URL names a port (`127.0.0.1:8080`, `storage.googleapis.com`); `.closed`
    /// without circuits.
    public nonisolated func circuitState(of host: String) -> CircuitState {
        circuitBreakers?.state(of: host) ?? .closed
    }

    /// Whether the service still takes requests, from any thread: false from the start of
    /// ``shutdown(_:)``. A transfer that passed it and reaches the loop after shutdown cancelled
    /// every transfer is refused there (``CurlMulti/submit(_:cancelled:)``).
    @inline(never) // its error's construction would sit in the pipeline's long-lived frame
    nonisolated func checkAccepting() throws(TransportError) {
        guard accepting.load(ordering: .acquiring) else { throw TransportError(.shutdown, message: "the service was shut down") }
    }

    // MARK: Shutdown

    /// What ``shutdown(_:)`` does with transfers still in flight.
    public enum ShutdownMode: Sendable {
        /// Fail them at once with ``TransportError/shutdown``.
        case cancelInFlight
        /// Let them finish first; new requests are refused meanwhile.
        case drain
    }

    /// Stops the service: resolves in-flight transfers (see ``ShutdownMode``), removes every
    /// handle, cleans up the multi handle on its own thread and ends that thread.
    ///
    /// Later calls to `send` throw ``TransportError/shutdown``. Calling it again waits for the
    /// first call to finish.
    public nonisolated func shutdown(_ mode: ShutdownMode = .cancelInFlight) async {
        await stopTransfers(mode)
        await loop.waitUntilStopped()
    }

    private func stopTransfers(_ mode: ShutdownMode) async {
        guard phase == .running else { return }
        phase = .shuttingDown
        accepting.store(false, ordering: .releasing)
        if mode == .drain {
            await withUnsafeContinuation { multi.whenIdle($0) }
        }
        multi.cancelAll(with: TransportError(.shutdown, message: "the service was shut down"))
        // Requests waiting for a rate-limit token would wait out their turn only to be refused.
        rateLimiter?.failWaiters(with: TransportError(.shutdown, message: "the service was shut down"))
        eventHub.finishAll()
        trafficLog?.flush()
        phase = .stopped
        loop.stop()
    }
}

/// Runs `body` with a new service and shuts it down afterwards, also when `body` throws.
@discardableResult
public func withService<Result>(
    configuration: ServiceActor.Configuration = ServiceActor.Configuration(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (ServiceActor) async throws -> Result
) async throws -> Result {
    let service = try ServiceActor(configuration: configuration)
    do {
        let result = try await body(service)
        await service.shutdown()
        return result
    } catch {
        await service.shutdown()
        throw error
    }
}
