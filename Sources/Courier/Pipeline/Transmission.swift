import Foundation

/// How one attempt reaches the wire and what it brings back: a buffered response, a streamed
/// one, or a body written to a file. The pipeline is the same for all three; only this differs,
/// including how a test handler's buffered answer is turned into the same kind of output.
struct Transmission<Output: Sendable>: Sendable {
    /// Sends over the network (the service's transport).
    let send: @Sendable (ServiceActor, HTTPRequest) async throws -> Output
    /// Turns a test handler's answer into this output, so a mock looks like the network.
    let mock: @Sendable (HTTPRequest, HTTPResponse) async throws -> Output
    let head: @Sendable (Output) -> HTTPResponseHead
    /// The body in memory, if the output holds it (for logs and metrics).
    let body: @Sendable (Output) -> Data?
    /// Reads a refused answer's body (bounded), for ``APIError``, its error reasons and the log;
    /// returns it with an output that still carries that body.
    let settle: @Sendable (Output) async throws -> (HTTPResponse, Output)
}

extension Transmission where Output == HTTPResponse {
    /// The body in memory, up to ``ServiceActor/Configuration/maxResponseBodySize``.
    static var buffered: Self {
        Transmission(send: { service, request in try await service.transmit(request) },
                     mock: { $1 }, head: { $0.head }, body: { $0.body }, settle: { ($0, $0) })
    }

    /// A 2xx body written to `file` (appended with `append`); other statuses come back buffered.
    static func file(_ file: URL, append: Bool) -> Self {
        Transmission(send: { service, request in try await service.transmit(request, to: file, append: append) },
                     mock: { _, response in
                         guard response.isSuccess else { return response }
                         try FileOutput.write(response.body, to: file, append: append)
                         return HTTPResponse(head: response.head)
                     },
                     head: { $0.head }, body: { $0.isSuccess ? nil : $0.body }, settle: { ($0, $0) })
    }
}

extension Transmission where Output == HTTPStreamingResponse {
    /// The head as soon as it arrives; the body as an `AsyncSequence`.
    static var streamed: Self {
        Transmission(send: { service, request in try await service.transmitStreaming(request) },
                     mock: { HTTPStreamingResponse(head: $1.head, body: HTTPResponseBody(buffered: $1.body)) },
                     head: { $0.head }, body: { _ in nil },
                     settle: { output in
                         let body = try await output.body.collect(upTo: 1 << 20)
                         return (HTTPResponse(head: output.head, body: body),
                                 HTTPStreamingResponse(head: output.head, body: HTTPResponseBody(buffered: body)))
                     })
    }
}
