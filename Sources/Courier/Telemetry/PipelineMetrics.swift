import CourierSync
import Foundation
import Metrics

/// swift-metrics for every request and operation, with one dimension set throughout:
/// `operation` (execute, send, stream, download, batch, upload, token) and `status`
/// (`2xx` … `5xx`, `transport`, `cancelled`, `error`).
///
/// - `courier_requests_total`, `courier_request_duration_seconds`: each attempt on the wire;
/// - `courier_retries_total`: each retry, by the status that caused it;
/// - `courier_request_bytes_total`, `courier_response_bytes_total`: body bytes up and down, where known;
/// - `courier_operations_total`, `courier_operation_duration_seconds`: whole operations;
/// - `courier_credential_refreshes_total` (`source`, `mode` background/blocking, `result`) and
///   `courier_credential_waits_total` (`source`): token refreshes, and requests that waited for one.
///
/// With no backend bootstrapped (`MetricsSystem`'s no-op) nothing is made or counted, so the
/// plain path pays one branch. Handles are made once per dimension pair and kept.
final class PipelineMetrics: Sendable {
    let factory: (any MetricsFactory)?
    private let handles = LockedValue<[String: Handles]>([:])

    private final class Handles: Sendable {
        let requests: Counter
        let duration: Timer
        let retries: Counter
        let bytesUp: Counter
        let bytesDown: Counter
        let operations: Counter
        let operationDuration: Timer

        init(_ dimensions: [(String, String)], factory: any MetricsFactory) {
            requests = Counter(label: "courier_requests_total", dimensions: dimensions, factory: factory)
            duration = Timer(label: "courier_request_duration_seconds", dimensions: dimensions, factory: factory)
            retries = Counter(label: "courier_retries_total", dimensions: dimensions, factory: factory)
            bytesUp = Counter(label: "courier_request_bytes_total", dimensions: dimensions, factory: factory)
            bytesDown = Counter(label: "courier_response_bytes_total", dimensions: dimensions, factory: factory)
            operations = Counter(label: "courier_operations_total", dimensions: dimensions, factory: factory)
            operationDuration = Timer(label: "courier_operation_duration_seconds", dimensions: dimensions, factory: factory)
        }
    }

    var isEnabled: Bool { factory != nil }

    init(factory: (any MetricsFactory)?) {
        let chosen = factory ?? MetricsSystem.factory
        self.factory = chosen is NOOPMetricsHandler ? nil : chosen
    }

    static func statusClass(_ status: Int?, error: (any Error)?) -> String {
        if let status { return "\(status / 100)xx" }
        switch error {
        case is CancellationError: return "cancelled"
        case is TransportError: return "transport"
        default: return "error"
        }
    }

    private func handles(_ operation: RequestContext.Operation, _ status: String) -> Handles? {
        guard let factory else { return nil }
        let key = operation.rawValue + "/" + status
        return handles.withLock { cache in
            if let found = cache[key] { return found }
            let made = Handles([("operation", operation.rawValue), ("status", status)], factory: factory)
            cache[key] = made
            return made
        }
    }

    func attempt(operation: RequestContext.Operation, request: HTTPRequest, head: HTTPResponseHead?, body: Data?,
                 error: (any Error)?, duration: Duration) {
        guard factory != nil, let handles = handles(operation, Self.statusClass(head?.status, error: error)) else { return }
        handles.requests.increment()
        handles.duration.recordNanoseconds(duration.nanoseconds)
        if let sent = request.body.knownLength, sent > 0 { handles.bytesUp.increment(by: Int64(sent)) }
        let received = body.map { Int64($0.count) } ?? head?.headers["Content-Length"].flatMap { Int64($0) } ?? 0
        if received > 0 { handles.bytesDown.increment(by: received) }
    }

    func retry(operation: RequestContext.Operation, status: Int?) {
        guard factory != nil else { return }
        handles(operation, Self.statusClass(status, error: TransportError.connectionLost))?.retries.increment()
    }

    func operation(_ operation: RequestContext.Operation, status: Int?, error: (any Error)?, duration: Duration) {
        guard factory != nil else { return }
        // A failed operation is classed by its error even when a status was seen on the way.
        let status = error == nil || error is APIError ? status : nil
        guard let handles = handles(operation, Self.statusClass(status, error: error)) else { return }
        handles.operations.increment()
        handles.operationDuration.recordNanoseconds(duration.nanoseconds)
    }
}

extension PipelineMetrics {
    func credentialRefresh(source: String, background: Bool, failed: Bool) {
        guard let factory else { return }
        Counter(label: "courier_credential_refreshes_total", dimensions: [
            ("source", source), ("mode", background ? "background" : "blocking"), ("result", failed ? "error" : "ok"),
        ], factory: factory).increment()
    }

    func credentialWait(source: String) {
        guard let factory else { return }
        Counter(label: "courier_credential_waits_total", dimensions: [("source", source)], factory: factory).increment()
    }
}
