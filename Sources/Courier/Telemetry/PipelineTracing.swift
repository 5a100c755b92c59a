import Foundation
import Tracing

/// swift-distributed-tracing on every operation: a span per operation (named after the query,
/// `notes.get`; a child of the caller's span, if any) and a child span per attempt on the wire
/// (named after the HTTP method, as OpenTelemetry's HTTP conventions do), whose context the
/// tracer injects into the request's headers: W3C `traceparent` with an OpenTelemetry tracer.
///
/// Attributes follow OpenTelemetry's HTTP client conventions (`http.request.method`, `url.full`
/// with secrets snipped, `server.address`, `http.response.status_code`,
/// `http.request.resend_count`, body sizes, `error.type`) plus `courier.request_id`,
/// `courier.operation` and `courier.retries`.
///
/// With no tracer (``ServiceActor/Configuration/Telemetry-swift.struct/tracer`` nil and `InstrumentationSystem`'s
/// no-op), nothing is made and the plain path pays one branch.
struct PipelineTracing: Sendable {
    let tracer: any Tracer

    init?(_ configured: (any Tracer)?) {
        let tracer = configured ?? InstrumentationSystem.tracer
        if tracer is NoOpTracer { return nil }
        self.tracer = tracer
    }

    /// Runs an operation in its span, which becomes the current context of everything it does.
    func operation<T>(_ context: RequestContext, _ body: () async throws -> T) async throws -> T {
        let span = tracer.startSpan(context.name, context: ServiceContext.current ?? .topLevel, ofKind: .internal,
                                    at: DefaultTracerClock.now, function: "operation", file: #fileID, line: #line)
        span.updateAttributes { attributes in
            attributes["courier.request_id"] = context.requestID
            attributes["courier.operation"] = context.operation.rawValue
        }
        defer { span.end() }
        do {
            let value = try await ServiceContext.$current.withValue(span.context) { try await body() }
            finish(span, context, error: nil)
            return value
        } catch {
            finish(span, context, error: error)
            throw error
        }
    }

    private func finish(_ span: any Span, _ context: RequestContext, error: (any Error)?) {
        let status = (error as? APIError)?.status ?? context.attempts.lastStatus
        span.updateAttributes { attributes in
            attributes["courier.retries"] = context.attempts.retries
            if let status { attributes["http.response.status_code"] = status }
        }
        if let error { Self.fail(span, error) }
    }

    /// Starts an attempt's span under the current operation's and injects its context into `request`.
    func attempt(_ request: inout HTTPRequest, _ context: RequestContext) -> any Span {
        let span = tracer.startSpan(request.method.rawValue, context: ServiceContext.current ?? .topLevel, ofKind: .client,
                                    at: DefaultTracerClock.now, function: "attempt", file: #fileID, line: #line)
        let url = request.url
        let resends = context.attempts.retries
        span.updateAttributes { attributes in
            attributes["http.request.method"] = request.method.rawValue
            attributes["url.full"] = Redaction.url(url.absoluteString)
            if let host = url.host { attributes["server.address"] = host }
            if let port = url.port { attributes["server.port"] = port }
            attributes["courier.request_id"] = context.requestID
            if resends > 0 { attributes["http.request.resend_count"] = resends }
            if let sent = request.body.knownLength { attributes["http.request.body.size"] = sent }
        }
        tracer.inject(span.context, into: &request.headers, using: HTTPHeadersInjector())
        return span
    }

    /// Ends an attempt's span with its answer or error.
    func ended(_ span: any Span, head: HTTPResponseHead?, bodySize: Int?, error: (any Error)?) {
        span.updateAttributes { attributes in
            if let head { attributes["http.response.status_code"] = head.status }
            if let bodySize { attributes["http.response.body.size"] = bodySize }
            if let head, head.status >= 400 { attributes["error.type"] = String(head.status) }
        }
        if let error { Self.fail(span, error) }
        if let head, head.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
        span.end()
    }

    private static func fail(_ span: any Span, _ error: any Error) {
        span.recordError(error)
        span.updateAttributes { $0["error.type"] = String(describing: type(of: error)) }
        span.setStatus(SpanStatus(code: .error, message: Redaction.text("\(error)")))
    }
}

/// Writes a tracer's propagation headers (`traceparent`, `tracestate`) into a request's.
struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: key, value: value)
    }
}
