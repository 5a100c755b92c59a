import Foundation
import Prometheus

/// A run's figures while it runs, as Prometheus metrics (swift-prometheus): what
/// `courier load --metrics-port` serves on `/metrics`.
///
/// | metric | type | labels |
/// |---|---|---|
/// | `courier_load_requests_total` | counter | `step` (the scenario request's name), `status` (the code, or the failure's kind) |
/// | `courier_load_errors_total` | counter | `step` |
/// | `courier_load_request_duration_seconds` | histogram | `step` |
/// | `courier_load_checks_total` | counter | `check`, `outcome` (`pass`, `fail`) |
/// | `courier_load_skipped_total` | counter: flow steps not sent (a value was missing) | `step` |
/// | `courier_load_dropped_total` | counter: the open model's scheduled requests not sent (the run fell more than its timeout behind), known when the run ends | |
/// | `courier_load_bytes_received_total` | counter | |
/// | `courier_load_bytes_sent_total` | counter | |
/// | `courier_load_in_flight` | gauge | |
/// | `courier_load_target_rate` | gauge: the open model's scheduled requests/s now (this shard's share) | |
/// | `courier_load_target_in_flight` | gauge: the closed model's requests in flight the run asks for now | |
///
/// Only the measured phase counts, not the warm-up, so the counters end equal to the result's
/// figures. Recording costs an atomic add and a histogram's lock per request, and nothing at all
/// when no `LoadMetrics` is given.
///
/// ```swift
/// let metrics = LoadMetrics()
/// let runner = try LoadRunner(options: options, metrics: metrics)
/// // serve metrics.exposition() on /metrics while runner.run() runs
/// ```
public final class LoadMetrics: Sendable {
    /// The registry the metrics live in; a scrape emits it.
    public let registry: PrometheusCollectorRegistry
    let inFlight: Gauge
    let targetRate: Gauge
    let targetInFlight: Gauge
    let bytesReceived: Counter
    let bytesSent: Counter
    let dropped: Counter

    /// The latency histogram's buckets: Prometheus's defaults, from 1 ms, and past them to 30 s.
    static let buckets: [Duration] = [.milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
                                      .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
                                      .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30)]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        inFlight = registry.makeGauge(descriptor: Self.name("in_flight", "", "Requests in flight now."))
        targetRate = registry.makeGauge(descriptor: Self.name("target_rate", "", "The open model's scheduled requests per second now (this shard's share)."))
        targetInFlight = registry.makeGauge(descriptor: Self.name("target_in_flight", "", "The closed model's requests in flight the run asks for now."))
        bytesReceived = registry.makeCounter(descriptor: Self.name("bytes_received", "total", "Response body bytes received."))
        bytesSent = registry.makeCounter(descriptor: Self.name("bytes_sent", "total", "Request body bytes sent."))
        dropped = registry.makeCounter(descriptor: Self.name("dropped", "total",
                                                             "The open model's scheduled requests not sent: the run fell more than its timeout behind its rate (counted when it ends)."))
    }

    /// `courier_load_<name>_<unit>`.
    static func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "courier", subsystem: "load", metricName: name, unitName: unit, helpText: help)
    }

    /// The Prometheus text exposition of every metric, as a scrape gets it.
    public func exposition() -> String {
        registry.emitToString()
    }

    /// The content type of ``exposition()``.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The handles one run records into, made once per label set and kept, so a request costs no
    /// lookup in the registry. Lives in the recorder's locked state.
    struct Handles {
        let metrics: LoadMetrics
        let steps: [String]
        let checkNames: [String]
        let errors: [Counter]
        let skipped: [Counter]
        let latency: [DurationHistogram]
        /// Per step, per status 0..<600, made when first seen.
        var statuses: [[Counter?]]
        /// Per step, other codes and failure kinds, made when first seen.
        var others: [[String: Counter]]
        let checkPasses: [Counter]
        let checkFails: [Counter]

        init(metrics: LoadMetrics, steps: [String], checkNames: [String]) {
            let registry = metrics.registry
            self.metrics = metrics
            self.steps = steps
            self.checkNames = checkNames
            errors = steps.map { registry.makeCounter(descriptor: LoadMetrics.name("errors", "total", "Requests that failed below HTTP or were answered with a status of 400 or more."),
                                                      labels: [("step", $0)]) }
            skipped = steps.map { registry.makeCounter(descriptor: LoadMetrics.name("skipped", "total", "Flow steps not sent because a value they needed was not found."),
                                                       labels: [("step", $0)]) }
            latency = steps.map { registry.makeDurationHistogram(
                descriptor: LoadMetrics.name("request_duration", "seconds", "Latency, from the request's start (its intended start in the open model)."),
                labels: [("step", $0)], buckets: LoadMetrics.buckets) }
            statuses = Array(repeating: Array(repeating: nil, count: 600), count: steps.count)
            others = Array(repeating: [:], count: steps.count)
            checkPasses = checkNames.map { Self.check(registry, $0, "pass") }
            checkFails = checkNames.map { Self.check(registry, $0, "fail") }
        }

        private static func check(_ registry: PrometheusCollectorRegistry, _ name: String, _ outcome: String) -> Counter {
            registry.makeCounter(descriptor: LoadMetrics.name("checks", "total", "Evaluations of each check, by outcome."),
                                 labels: [("check", name), ("outcome", outcome)])
        }

        mutating func record(step: Int, status: Int?, failure: String?, microseconds: UInt64, received: Int, sent: Int) {
            let failed = failure != nil || (status ?? 0) >= 400
            requests(step: step, status: status, failure: failure).increment()
            if failed { errors[step].increment() }
            latency[step].record(.microseconds(Int64(microseconds)))
            if received > 0 { metrics.bytesReceived.increment(by: Int64(received)) }
            if sent > 0 { metrics.bytesSent.increment(by: Int64(sent)) }
        }

        func recordSkipped(step: Int) {
            if skipped.indices.contains(step) { skipped[step].increment() }
        }

        mutating func recordCheck(_ index: Int, passed: Bool) {
            (passed ? checkPasses : checkFails)[index].increment()
        }

        private mutating func requests(step: Int, status: Int?, failure: String?) -> Counter {
            if failure == nil, let status, (0..<600).contains(status) {
                if let counter = statuses[step][status] { return counter }
                let counter = make(step: step, status: String(status))
                statuses[step][status] = counter
                return counter
            }
            let label = failure ?? String(status ?? 0)
            if let counter = others[step][label] { return counter }
            let counter = make(step: step, status: label)
            others[step][label] = counter
            return counter
        }

        private func make(step: Int, status: String) -> Counter {
            metrics.registry.makeCounter(
                descriptor: LoadMetrics.name("requests", "total", "Requests that ended, by step and status (a code, or the kind of failure below HTTP)."),
                labels: [("step", steps[step]), ("status", status)])
        }
    }
}
