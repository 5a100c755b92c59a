import Courier
import Foundation

/// Runs a load test through a Courier ``ServiceActor`` and returns its ``LoadResult``.
///
/// ```swift
/// var options = LoadOptions()
/// options.url = URL(string: "http://127.0.0.1:8080/bytes/1024")!
/// options.concurrency = 64
/// options.duration = .seconds(5)
/// let result = try await LoadRunner(options: options).run()
/// print(LoadReport(result).text)
/// ```
///
/// Workers are child tasks that each keep one request in flight (closed model) or take the next
/// slot of a schedule at a constant or ramping rate (open model). With a ramp of requests in
/// flight, worker `i` runs while the ramp allows more than `i`. Cancelling the calling task ends the run early:
/// requests in flight are cancelled and not counted, and the result covers what completed.
public struct LoadRunner: Sendable {
    public let options: LoadOptions
    /// Live metrics the run records into (``LoadMetrics``), for a `/metrics` endpoint.
    public let metrics: LoadMetrics?
    let plan: LoadPlan

    /// Checks the options and prepares the requests; nothing is sent yet.
    ///
    /// - Parameter defaultURL: what to load when the options name no URL and no scenario.
    /// - Parameter metrics: live metrics to record the measured phase into as well.
    public init(options: LoadOptions, defaultURL: URL? = nil, metrics: LoadMetrics? = nil) throws {
        try Self.validate(options)
        self.options = options
        self.metrics = metrics
        plan = try LoadPlan(options: options, defaultURL: defaultURL)
    }

    /// Checks the options alone (not the requests), as a command line does before anything else.
    ///
    /// - Throws: ``LoadError/invalidArgument(_:)`` naming what is wrong.
    public static func validate(_ options: LoadOptions) throws {
        guard options.concurrency >= 1 else { throw LoadError.invalidArgument("concurrency must be at least 1") }
        guard options.concurrency <= LoadOptions.mostInFlight else {
            throw LoadError.invalidArgument("concurrency \(options.concurrency) is more than \(LoadOptions.mostInFlight) in one process: shard the run")
        }
        if let requests = options.requests, requests < 1 { throw LoadError.invalidArgument("requests must be at least 1") }
        if let rate = options.rate, !(rate > 0 && rate.isFinite) { throw LoadError.invalidArgument("rate must be a positive number") }
        if let rate = options.rate, rate < LoadOptions.slowestRate {
            throw LoadError.invalidArgument("rate \(rate) is below one request in ten years")
        }
        guard options.duration > .zero || options.requests != nil || options.ramp != nil else {
            throw LoadError.invalidArgument("duration must be positive")
        }
        if let maxDuration = options.maxDuration {
            guard options.requests != nil else { throw LoadError.invalidArgument("maxDuration bounds a request count: give requests, or a duration alone") }
            guard maxDuration > .zero else { throw LoadError.invalidArgument("maxDuration must be positive") }
        }
        guard options.warmup >= .zero else { throw LoadError.invalidArgument("warm-up must not be negative") }
        guard options.timeout > .zero else { throw LoadError.invalidArgument("timeout must be positive") }
        for (name, duration) in [("duration", options.duration), ("maxDuration", options.maxDuration ?? .zero), ("warm-up", options.warmup),
                                 ("timeout", options.timeout)]
        where duration > LoadOptions.longestDuration {
            throw LoadError.invalidArgument("\(name) is longer than ten years")
        }
        if let ramp = options.ramp { try check(ramp, options: options) }
        if let shard = options.shard, workers(options: options) < shard.count {
            throw LoadError.invalidArgument("concurrency \(workers(options: options)) cannot be split over \(shard.count) shards")
        }
    }

    /// The service settings a run uses: enough connections for the concurrency, no retries
    /// (a load test reports failures, it does not hide them), no decompression.
    public var serviceConfiguration: ServiceActor.Configuration {
        var configuration = ServiceActor.Configuration()
        let isTLS = plan.entries.contains { $0.request.url.scheme == "https" }
        configuration.transport.httpVersion = options.http2 ? (isTLS ? .http2 : .http2PriorKnowledge) : .http1_1
        let connections = options.connections ?? (options.http2 ? max(1, workerCount / 100) : workerCount)
        configuration.limits.connections.maxConnectionsPerHost = connections
        configuration.limits.connections.maxConcurrentTransfersPerHost = workerCount
        configuration.limits.connections.maxConcurrentTransfers = max(configuration.limits.connections.maxConcurrentTransfers, workerCount)
        configuration.retry = .disabled
        configuration.transport.automaticDecompression = false
        configuration.transport.followRedirects = false
        configuration.transport.tls.verifyPeer = !options.insecure
        configuration.transport.timeouts = Timeouts(connect: min(options.timeout, .seconds(30)), total: options.timeout)
        return configuration
    }

    /// Starts a service with ``serviceConfiguration``, runs the load and shuts the service down.
    public func run(progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws -> LoadResult {
        let authorizer = try options.serviceAccountKey.map {
            try ServiceAccountAuthorizer(keyFile: $0, scopes: options.scopes)
        }
        return try await withService(configuration: serviceConfiguration) { service in
            try await run(on: service, authorizer: authorizer, progress: progress)
        }
    }

    /// Runs the load through an existing service.
    ///
    /// - Parameter authorizer: asked for credentials before each request (it caches its token).
    /// - Parameter progress: called about four times a second with the figures so far.
    public func run(on service: ServiceActor, authorizer: (any Authorizer)? = nil,
                    progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws -> LoadResult {
        if let authorizer { // fail before the run, not once per request, when the credentials are bad
            var probe = plan.entries[0].request
            try await authorizer.authorize(&probe)
        }
        let names = plan.perEndpoint ? plan.entries.map(\.name) : []
        if options.warmup > .zero {
            let discarded = LoadRecorder(endpointNames: names, checkNames: plan.checks.map(\.expression))
            _ = await phase(on: service, limit: .duration(nanoseconds: options.warmup.nanoseconds),
                            recorder: discarded, authorizer: authorizer, warmingUp: true, progress: progress)
        }
        let recorder = LoadRecorder(endpointNames: names, checkNames: plan.checks.map(\.expression),
                                    metrics: metrics, steps: plan.entries.map(\.name))
        let limit: LoadSchedule.Limit = options.requests.map { count in
            options.maxDuration.map { .requests(count, within: $0.nanoseconds) } ?? .requests(count)
        } ?? .duration(nanoseconds: options.ramp.map { UInt64(saturating: $0.seconds * 1e9) } ?? options.duration.nanoseconds)
        let seconds = await phase(on: service, limit: limit, recorder: recorder, authorizer: authorizer,
                                  warmingUp: false, progress: progress)
        var result = recorder.result(target: plan.target, model: options.isOpen ? .open : .closed,
                                     concurrency: workerCount,
                                     rate: options.ramp == nil ? options.rate.map { $0 / Double(options.shard?.count ?? 1) } : nil,
                                     durationSeconds: seconds)
        result.shard = options.shard
        result.ramp = options.ramp
        result.settings = options.settings
        return result
    }

    /// Requests in flight in this process, at most: its shard's share of the concurrency.
    var workerCount: Int { options.shard?.share(of: Self.workers(options: options)) ?? Self.workers(options: options) }

    /// The whole run's workers: the concurrency, or the peak of a ramp of requests in flight.
    static func workers(options: LoadOptions) -> Int {
        guard let ramp = options.ramp, ramp.kind == .concurrency else { return options.concurrency }
        return Int(saturating: StageProfile(initial: 0, stages: ramp.stages).peak.rounded(.up))
    }

    private static func check(_ ramp: LoadRamp, options: LoadOptions) throws {
        guard !ramp.stages.isEmpty else { throw LoadError.invalidArgument("a ramp has at least one stage") }
        guard options.requests == nil else { throw LoadError.invalidArgument("stages set the run's length: give stages or a request count, not both") }
        guard options.warmup == .zero else { throw LoadError.invalidArgument("stages ramp up themselves: give the first stage instead of a warm-up") }
        for stage in ramp.stages { try LoadStage.check(seconds: stage.seconds, target: stage.target) }
        guard ramp.seconds <= LoadOptions.longestSeconds else {
            throw LoadError.invalidArgument("the stages last longer than ten years")
        }
        if ramp.kind == .concurrency, let peak = ramp.stages.map(\.target).max(), peak > Double(LoadOptions.mostInFlight) {
            throw LoadError.invalidArgument("a stage's \(Format.number(peak)) in flight is more than \(LoadOptions.mostInFlight) in one process: shard the run")
        }
        switch ramp.kind {
        case .rate:
            guard StageProfile(initial: options.rate ?? 0, stages: ramp.stages).segments.contains(where: { $0.count >= 1 }) else {
                throw LoadError.invalidArgument("the stages' rates never reach one request")
            }
        case .concurrency:
            guard options.rate == nil else {
                throw LoadError.invalidArgument("stages of requests in flight are the closed model: give them without a rate, or give rates (30s:100/s)")
            }
            guard workers(options: options) >= 1 else { throw LoadError.invalidArgument("the stages never put a request in flight") }
        }
    }

    /// The open model's arrival rate over the run.
    private var rateProfile: StageProfile? {
        if let ramp = options.ramp, ramp.kind == .rate { return StageProfile(initial: options.rate ?? 0, stages: ramp.stages) }
        return options.rate.map { StageProfile(constant: $0) }
    }

    /// The closed model's ramp of requests in flight, if it ramps.
    private var inFlightProfile: StageProfile? {
        guard let ramp = options.ramp, ramp.kind == .concurrency else { return nil }
        return StageProfile(initial: 0, stages: ramp.stages)
    }

    /// Runs the workers until the schedule ends; returns the seconds it took.
    private func phase(on service: ServiceActor, limit: LoadSchedule.Limit, recorder: LoadRecorder,
                       authorizer: (any Authorizer)?, warmingUp: Bool,
                       progress: (@Sendable (LoadProgress) -> Void)?) async -> Double {
        let schedule = LoadSchedule(start: monotonicNanoseconds(), limit: limit, rate: rateProfile, shard: options.shard,
                                    lateness: options.timeout.nanoseconds)
        recorder.startClock(at: schedule.start)
        let ticker = progress.map { report in
            Task {
                await Self.tick(schedule: schedule, limit: limit, shard: options.shard, recorder: recorder, warmingUp: warmingUp,
                                report: report)
            }
        }
        let targets = metrics.map { metrics in
            Task { [rateProfile, inFlightProfile, workerCount, shard = options.shard] in
                await Self.publishTargets(metrics, schedule: schedule, rate: rateProfile, inFlight: inFlightProfile,
                                          workers: workerCount, shard: shard)
            }
        }
        let workers: @Sendable () async -> Void = { [plan, workerCount, inFlightProfile, shard = options.shard] in
            await withTaskGroup(of: Void.self) { group in
                for local in 0..<workerCount {
                    let ramp = inFlightProfile.map { LoadWorker.Ramp(profile: $0, number: shard?.globalNumber(local) ?? local) }
                    let worker = LoadWorker(plan: plan, service: service, authorizer: authorizer,
                                            schedule: schedule, recorder: recorder, ramp: ramp)
                    group.addTask { await worker.run() }
                }
            }
        }
        if options.loopExecutor {
            await withTaskExecutorPreference(service.executor, operation: workers)
        } else {
            await workers()
        }
        recorder.recordDropped(schedule.dropped)
        ticker?.cancel()
        targets?.cancel()
        if let metrics { metrics.targetRate.set(to: 0); metrics.targetInFlight.set(to: 0) }
        return Double(monotonicNanoseconds() - schedule.start) / 1e9
    }

    /// Keeps the live target gauges at what the schedule asks for now, four times a second.
    private static func publishTargets(_ metrics: LoadMetrics, schedule: LoadSchedule, rate: StageProfile?, inFlight: StageProfile?,
                                       workers: Int, shard: LoadShard?) async {
        let share = Double(shard?.count ?? 1)
        while !Task.isCancelled {
            let seconds = Double(monotonicNanoseconds() - schedule.start) / 1e9
            if let rate { metrics.targetRate.set(to: rate.value(at: seconds) / share) }
            // A ramp of requests in flight is split over shards worker by worker; a share is near enough for a gauge.
            metrics.targetInFlight.set(to: inFlight.map { min(Double(workers), ($0.value(at: seconds) / share).rounded(.down)) } ?? (rate == nil ? Double(workers) : 0))
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    private static func tick(schedule: LoadSchedule, limit: LoadSchedule.Limit, shard: LoadShard?, recorder: LoadRecorder,
                             warmingUp: Bool,
                             report: @Sendable (LoadProgress) -> Void) async {
        var last = (time: schedule.start, requests: 0)
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let now = monotonicNanoseconds()
            let counts = recorder.counts
            let rate = Double(counts.requests - last.requests) / (Double(now - last.time) / 1e9)
            last = (now, counts.requests)
            var snapshot = LoadProgress(elapsedSeconds: Double(now - schedule.start) / 1e9, requests: counts.requests,
                                        errors: counts.errors, currentRate: rate, warmingUp: warmingUp)
            if let nanoseconds = limit.nanoseconds { snapshot.totalSeconds = Double(nanoseconds) / 1e9 }
            if let count = limit.requests { snapshot.totalRequests = shard?.share(of: count) ?? count }
            if !Task.isCancelled { report(snapshot) }
        }
    }
}

/// The figures of a run in progress, for a live view.
public struct LoadProgress: Sendable {
    public var elapsedSeconds: Double
    /// The phase's length, when it runs for a duration.
    public var totalSeconds: Double?
    /// The phase's request count, when it sends a fixed number.
    public var totalRequests: Int?
    public var requests: Int
    public var errors: Int
    /// Requests per second since the previous report.
    public var currentRate: Double
    /// Whether this is the warm-up, which is not recorded.
    public var warmingUp: Bool

    public init(elapsedSeconds: Double, totalSeconds: Double? = nil, totalRequests: Int? = nil, requests: Int,
                errors: Int, currentRate: Double, warmingUp: Bool) {
        self.elapsedSeconds = elapsedSeconds
        self.totalSeconds = totalSeconds
        self.totalRequests = totalRequests
        self.requests = requests
        self.errors = errors
        self.currentRate = currentRate
        self.warmingUp = warmingUp
    }
}

extension Duration {
    /// Whole nanoseconds: 0 for a negative duration, `UInt64.max` past 584 years.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = UInt64(max(0, seconds)).multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, carry) = whole.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflow || carry ? .max : sum
    }
}
