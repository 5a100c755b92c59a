import Courier
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` on a ``Courier/ServiceActor``: every client that
/// swift-openapi-generator makes gets Courier's whole request pipeline — the test handler,
/// limits and rate limits, credentials refreshed after a 401, retries that never re-send a write,
/// circuit breakers, redacted logs, spans and metrics named after the operation, Task
/// cancellation and cancel by request ID — on libcurl.
///
/// ```swift
/// try await withService(configuration: configuration) { service in
///     let client = Client(serverURL: try Servers.Server1.url(), transport: CourierTransport(service: service))
///     let note = try await client.getNote(path: .init(id: "42")).ok.body.json
/// }
/// ```
///
/// Bodies stream both ways: a request body of unknown or large length goes out as it is read,
/// and the response body is handed over once the head arrives, chunk by chunk with backpressure.
public struct CourierTransport: ClientTransport {
    /// The service every request goes through.
    public let service: ServiceActor
    /// How operations map onto the pipeline's promises.
    public var configuration: Configuration

    public init(service: ServiceActor, configuration: Configuration = Configuration()) {
        self.service = service
        self.configuration = configuration
    }

    public func send(_ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws
        -> (HTTPTypes.HTTPResponse, HTTPBody?)
    {
        var outgoing = try Courier.HTTPRequest(request, baseURL: baseURL)
        outgoing.body = try await Self.body(body, bufferingUpTo: configuration.replayableBodyLimit)
        if configuration.idempotentOperations.contains(operationID) { outgoing.idempotency = .always }
        let options = RequestOptions(requestID: CourierTransport.requestID, retry: configuration.retry,
                                     authorize: configuration.authorize, name: operationID)
        let response = try await service.stream(outgoing, options: options)
        return (HTTPTypes.HTTPResponse(response.head), HTTPBody(response, method: request.method))
    }
}
