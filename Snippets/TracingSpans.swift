// Tracing with swift-distributed-tracing: a span per query, a child span per attempt, and the
// attempt's context in the request's headers. Here the tracer is InMemoryTracer; in production,
// bootstrap an OpenTelemetry tracer (swift-otel), which sends W3C `traceparent`.
import Courier
import CourierTestServer
import Foundation
import InMemoryTracing
import Tracing

let server = try await TestServer.start()
let notes = APIDescription(name: "notes", version: "v1", rootURL: server.baseURL, servicePath: "notes/v1/")

let tracer = InMemoryTracer()
var configuration = ServiceActor.Configuration()
configuration.telemetry.tracer = tracer           // or InstrumentationSystem.bootstrap(otelTracer) once, for every service
configuration.retry = RetryPolicy(initialDelay: 0.01...0.02)

try await withService(configuration: configuration) { service in
    // notes.flaky answers 503 once, then 200: one query, two attempts.
    var flaky = Query<GenericObject>(api: notes, name: "notes.flaky", path: "flaky/{key}", pathParameters: ["key": "demo"])
    flaky.parameters.set("failures", 1)
    _ = try await tracer.withSpan("handle-request") { _ in try await service.execute(flaky) }
}
let spans = tracer.finishedSpans
func show(_ parent: String?, depth: Int) {
    for span in spans where span.parentSpanID == parent {
        var status = ""
        if case .int64(let code)? = span.attributes["http.response.status_code"]?.toSpanAttribute() { status = " → \(code)" }
        print(String(repeating: "  ", count: depth) + span.operationName + status)
        show(span.spanID, depth: depth + 1)
    }
}
show(nil, depth: 0)
await server.stop()
