@testable import Courier
import CourierTestServer
import CourierTesting
import Foundation
import InMemoryTracing
import CourierTestSupport
import Testing
import Tracing

/// InMemoryTracer, propagating its span contexts as W3C `traceparent` (as an OpenTelemetry
/// tracer does), with IDs of W3C's shape: 32 and 16 hex digits.
struct W3CTestTracer: Tracer {
    let inner = InMemoryTracer(idGenerator: .init(
        nextTraceID: { (0..<2).map { _ in String(format: "%016llx", UInt64.random(in: 1...UInt64.max)) }.joined() },
        nextSpanID: { String(format: "%016llx", UInt64.random(in: 1...UInt64.max)) }))

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> InMemorySpan {
        inner.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? { inner.activeSpan(identifiedBy: context) }
    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
        where Inject.Carrier == Carrier
    {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
        where Extract.Carrier == Carrier {}

    var finished: [FinishedInMemorySpan] { inner.finishedSpans }
}

extension FinishedInMemorySpan {
    func int(_ key: String) -> Int64? {
        if case .int64(let value)? = attributes[key]?.toSpanAttribute() { return value }
        return nil
    }

    func string(_ key: String) -> String? {
        if case .string(let value)? = attributes[key]?.toSpanAttribute() { return value }
        return nil
    }
}

@Suite struct TracingTests {
    /// A query retried once: its span is a child of the caller's, with one child span per
    /// attempt (the first a 503, the second a 200 with `http.request.resend_count` 1).
    @Test func aQuerysSpanHasOneChildPerAttempt() async throws {
        let tracer = W3CTestTracer()
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL, clock: VirtualClock())
            configuration.telemetry.tracer = tracer
            try await withCheckedService(configuration: configuration) { service in
                let query = Notes.flaky("traced-\(UUID())", failures: 1)
                _ = try await tracer.withSpan("caller") { _ in try await service.execute(query) }
                let spans = tracer.finished
                let caller = try #require(spans.first { $0.operationName == "caller" })
                let operation = try #require(spans.first { $0.operationName == "notes.flaky" })
                #expect(operation.parentSpanID == caller.spanID && operation.traceID == caller.traceID)
                #expect(operation.kind == .internal)
                #expect(operation.string("courier.request_id") == query.requestID)
                #expect(operation.int("courier.retries") == 1)
                #expect(operation.int("http.response.status_code") == 200)
                let attempts = spans.filter { $0.parentSpanID == operation.spanID }
                #expect(attempts.map(\.operationName) == ["GET", "GET"])
                #expect(attempts.allSatisfy { $0.kind == .client })
                #expect(attempts.map { $0.int("http.response.status_code") } == [503, 200])
                #expect(attempts.map { $0.int("http.request.resend_count") } == [nil, 1])
                #expect(attempts[0].status?.code == .error)
                #expect(attempts[1].string("server.address") == "127.0.0.1")
                #expect(attempts[1].string("url.full")?.contains("/flaky/") == true)
                #expect((attempts[1].int("http.response.body.size") ?? 0) > 0)
            }
        }
    }

    /// The attempt's context travels with the request: the server receives a W3C
    /// `traceparent` naming the attempt's span, in the operation's trace.
    @Test func theServerReceivesTraceparent() async throws {
        let tracer = W3CTestTracer()
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.telemetry.tracer = tracer
            try await withCheckedService(configuration: configuration) { service in
                let response = try await service.send(HTTPRequest(url: server.url("/echo")))
                let echo = try JSONValue(parsing: response.body)
                let headers = echo.objectValue?["headers"]?.arrayValue ?? []
                let values: [String] = headers.compactMap { (pair: JSONValue) -> String? in
                    guard let pair = pair.arrayValue, pair.first?.stringValue?.lowercased() == "traceparent" else { return nil }
                    return pair.last?.stringValue
                }
                let traceparent = try #require(values.first)
                let attempt = try #require(tracer.finished.first { $0.kind == .client })
                #expect(traceparent == "00-\(attempt.traceID)-\(attempt.spanID)-01")
                #expect(traceparent.wholeMatch(of: /00-[0-9a-f]{32}-[0-9a-f]{16}-01/) != nil)
                let operation = try #require(tracer.finished.first { $0.operationName == "send" })
                #expect(attempt.parentSpanID == operation.spanID)
            }
        }
    }

    /// A failed operation records its error on its span.
    @Test func aFailedOperationsSpanCarriesItsError() async throws {
        let tracer = W3CTestTracer()
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.telemetry.tracer = tracer
            configuration.retry = .disabled
            try await withCheckedService(configuration: configuration) { service in
                await #expect(throws: APIError.self) { try await service.execute(Notes.get("no-such-note")) }
                let operation = try #require(tracer.finished.first { $0.operationName == "notes.notes.get" })
                #expect(operation.status?.code == .error)
                #expect(operation.errors.count == 1)
                #expect(operation.int("http.response.status_code") == 404)
            }
        }
    }
}
