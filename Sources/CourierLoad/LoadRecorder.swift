import Courier
import CourierSync
import Foundation
import Synchronization

/// Where workers record what happened to each request.
///
/// One lock, not one histogram a worker: with a thousand workers, per-worker histograms (184 KB
/// each) would cost more memory than the load, and on the loop executor every worker runs on one
/// thread anyway, so the lock is never contended there.
final class LoadRecorder: Sendable {
    struct State {
        var requests = 0
        var errors = 0
        var skipped = 0
        var dropped = 0
        var bytesReceived: Int64 = 0
        var bytesSent: Int64 = 0
        /// Counts by status for 0..<600; rarer codes go to `otherStatuses`.
        var statuses = [Int](repeating: 0, count: 600)
        var otherStatuses: [Int: Int] = [:]
        var errorKinds: [String: Int] = [:]
        var latency = LatencyDistribution()
        var endpoints: [EndpointResult]
        var timeline: LoadTimeline
        /// The monotonic clock at ``LoadTimeline/startedAt``.
        var clockStart: UInt64
        /// Per check of the plan: how often it held and failed.
        var checkPasses: [Int]
        var checkFails: [Int]
        /// Live Prometheus metrics, when the run serves them.
        var live: LoadMetrics.Handles?
    }

    /// Which of the plan's checks a request evaluated, and which of those held: bit `i` is check `i`.
    struct CheckOutcomes {
        var evaluated: UInt64 = 0
        var passed: UInt64 = 0
    }

    private let state: LockedValue<State>
    private let endpointNames: [String]
    private let checkNames: [String]
    /// The live metrics' gauges, set outside the lock.
    let metrics: LoadMetrics?

    /// - Parameter endpointNames: the scenario's request names; per-endpoint figures are kept
    ///   only when there is more than one, or a scenario named them.
    /// - Parameter checkNames: the plan's checks, whose outcomes are counted by position.
    /// - Parameter metrics: live metrics to record into as well, labelled by `steps` (every request's name).
    init(endpointNames: [String], checkNames: [String] = [], metrics: LoadMetrics? = nil, steps: [String] = []) {
        self.endpointNames = endpointNames
        self.checkNames = checkNames
        self.metrics = metrics
        state = LockedValue(State(endpoints: Array(repeating: EndpointResult(), count: endpointNames.count),
                                  timeline: LoadTimeline(startedAt: Date().timeIntervalSince1970),
                                  clockStart: monotonicNanoseconds(),
                                  checkPasses: Array(repeating: 0, count: checkNames.count),
                                  checkFails: Array(repeating: 0, count: checkNames.count),
                                  live: metrics.map { LoadMetrics.Handles(metrics: $0, steps: steps, checkNames: checkNames) }))
    }

    /// Starts the timeline's clock: the measured phase begins at `clock` (monotonic) and now (wall).
    func startClock(at clock: UInt64) {
        let wall = Date().timeIntervalSince1970 - Double(monotonicNanoseconds() &- clock) / 1e9
        state.withLock { state in
            state.clockStart = clock
            state.timeline = LoadTimeline(startedAt: wall)
        }
    }

    /// - Parameter now: the monotonic time the request ended, for the timeline.
    func recordResponse(endpoint: Int, status: Int, microseconds: UInt64, received: Int, sent: Int, now: UInt64,
                        checks: CheckOutcomes = CheckOutcomes()) {
        let failed = status >= 400
        state.withLock { state in
            if checks.evaluated != 0 { Self.count(checks, in: &state) }
            state.timeline.record(atSecond: Self.seconds(now, since: state.clockStart), failed: failed, microseconds: microseconds)
            state.requests += 1
            if failed { state.errors += 1 }
            state.bytesReceived += Int64(received)
            state.bytesSent += Int64(sent)
            if status >= 0 && status < 600 { state.statuses[status] += 1 } else { state.otherStatuses[status, default: 0] += 1 }
            state.latency.record(microseconds: microseconds)
            state.live?.record(step: endpoint, status: status, failure: nil, microseconds: microseconds, received: received, sent: sent)
            if !state.endpoints.isEmpty {
                state.endpoints[endpoint].requests += 1
                if failed { state.endpoints[endpoint].errors += 1 }
                state.endpoints[endpoint].latency.record(microseconds: microseconds)
            }
        }
    }

    func recordFailure(endpoint: Int, kind: String, microseconds: UInt64, sent: Int, now: UInt64,
                       checks: CheckOutcomes = CheckOutcomes()) {
        state.withLock { state in
            if checks.evaluated != 0 { Self.count(checks, in: &state) }
            state.timeline.record(atSecond: Self.seconds(now, since: state.clockStart), failed: true, microseconds: microseconds)
            state.requests += 1
            state.errors += 1
            state.bytesSent += Int64(sent)
            state.errorKinds[kind, default: 0] += 1
            state.latency.record(microseconds: microseconds)
            state.live?.record(step: endpoint, status: nil, failure: kind, microseconds: microseconds, received: 0, sent: sent)
            if !state.endpoints.isEmpty {
                state.endpoints[endpoint].requests += 1
                state.endpoints[endpoint].errors += 1
                state.endpoints[endpoint].latency.record(microseconds: microseconds)
            }
        }
    }

    /// Flow steps a run did not send (a value was missing): not requests, counted apart; the
    /// checks of the first of them count as failed, as an unanswered request's do.
    func recordSkipped(endpoints: ArraySlice<Int>, checks: CheckOutcomes) {
        state.withLock { state in
            if checks.evaluated != 0 { Self.count(checks, in: &state) }
            state.skipped += endpoints.count
            for endpoint in endpoints where endpoint < state.endpoints.count { state.endpoints[endpoint].skipped += 1 }
            if let live = state.live { for step in endpoints { live.recordSkipped(step: step) } }
        }
    }

    /// Open model: scheduled requests the run did not send, having fallen more than its timeout
    /// behind its schedule (``LoadSchedule/dropped``).
    func recordDropped(_ count: Int) {
        // Held at the largest count a result holds: a rate no machine sends (1e300) drops more.
        state.withLock { state in
            let before = state.dropped
            state.dropped = min(Count.sum(state.dropped, count), Int(LatencyDistribution.largestCount))
            if state.dropped > before { state.live?.metrics.dropped.increment(by: Int64(state.dropped - before)) }
        }
    }

    private static func count(_ checks: CheckOutcomes, in state: inout State) {
        var bits = checks.evaluated
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            let passed = checks.passed & (1 << index) != 0
            if passed { state.checkPasses[index] += 1 } else { state.checkFails[index] += 1 }
            state.live?.recordCheck(index, passed: passed)
        }
    }

    private static func seconds(_ now: UInt64, since start: UInt64) -> Double {
        now > start ? Double(now - start) / 1e9 : 0
    }

    /// Requests and errors so far, for the live view.
    var counts: (requests: Int, errors: Int) {
        state.withLock { ($0.requests, $0.errors) }
    }

    func result(target: String, model: LoadModel, concurrency: Int, rate: Double?, durationSeconds: Double) -> LoadResult {
        state.withLock { state in
            var statusCodes = state.otherStatuses
            for (code, count) in state.statuses.enumerated() where count > 0 { statusCodes[code] = count }
            var endpoints: [String: EndpointResult] = [:]
            for (index, name) in endpointNames.enumerated() where index < state.endpoints.count {
                endpoints[name] = state.endpoints[index]
            }
            var result = LoadResult(target: target, model: model, concurrency: concurrency, rate: rate,
                                    durationSeconds: durationSeconds, requests: state.requests, errors: state.errors,
                                    bytesReceived: state.bytesReceived, bytesSent: state.bytesSent, statusCodes: statusCodes,
                                    errorKinds: state.errorKinds, latency: state.latency, endpoints: endpoints,
                                    timeline: state.timeline)
            result.skipped = state.skipped
            result.dropped = state.dropped
            result.checks = checkNames.indices.map {
                CheckResult(expression: checkNames[$0], passes: state.checkPasses[$0], fails: state.checkFails[$0])
            }
            return result
        }
    }
}
