import Metrics

/// swift-metrics counters and timers per query method. With no metrics backend bootstrapped
/// these are no-ops.
enum QueryMetrics {
    static func record(method: String, status: Int?, failed: Bool, duration: Duration) {
        let outcome = failed ? (status.map { "\($0)" } ?? "error") : "success"
        Counter(label: "courier_queries_total", dimensions: [("method", method), ("outcome", outcome)]).increment()
        Timer(label: "courier_query_duration", dimensions: [("method", method)])
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
