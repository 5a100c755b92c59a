import Foundation

/// How one attempt reaches the wire and what it brings back: a buffered response, a streamed
/// one, or a body written to a file. The pipeline is the same for all; only this differs,
/// including how a test handler's buffered answer becomes the same kind of output.
///
/// A protocol with `nonisolated(nonsending)` methods rather than stored closures: an async
/// closure runs on the generic executor, so calling one costs a real executor hop per request
/// (measured: about a tenth of a small request's CPU on the loop executor).
protocol Transmission: Sendable {
    associatedtype Output: Sendable
    /// Sends over the network (the service's transport); libcurl's own re-sends of the request
    /// are counted in `tally`, for the pipeline to announce.
    nonisolated(nonsending) func send(_ request: HTTPRequest, through service: ServiceActor, tally: AttemptTally) async throws
        -> Output
    /// Turns a test handler's answer into this output, so a mock looks like the network.
    nonisolated(nonsending) func mock(_ request: HTTPRequest, answer: HTTPResponse) async throws -> Output
    func head(of output: Output) -> HTTPResponseHead
    /// The body in memory, if the output holds it (for logs and metrics).
    func body(of output: Output) -> Data?
    /// Reads a refused answer's body (bounded), for ``APIError``, its error reasons and the log;
    /// returns it with an output that still carries that body.
    nonisolated(nonsending) func settle(_ output: Output) async throws -> (HTTPResponse, Output)
    /// The bytes of the data this transmission has kept so far (a download's partial file, a
    /// slice's written bytes); 0 for one that keeps nothing across attempts. When a failed
    /// attempt moved it on, the next attempt resumes from further along.
    func bytesKept() -> Int64
}

extension Transmission {
    func bytesKept() -> Int64 { 0 }
}

extension Transmission where Output == HTTPResponse {
    func head(of output: HTTPResponse) -> HTTPResponseHead { output.head }
    nonisolated(nonsending) func settle(_ output: HTTPResponse) async throws -> (HTTPResponse, HTTPResponse) { (output, output) }
}

/// The body in memory, up to ``ServiceActor/Configuration/Transport-swift.struct/maxResponseBodySize``.
struct BufferedTransmission: Transmission {
    nonisolated(nonsending) func send(_ request: HTTPRequest, through service: ServiceActor, tally: AttemptTally) async throws
        -> HTTPResponse
    {
        try await service.transmit(request, resends: tally)
    }

    nonisolated(nonsending) func mock(_ request: HTTPRequest, answer: HTTPResponse) async throws -> HTTPResponse { answer }
    func body(of output: HTTPResponse) -> Data? { output.body }
}

/// A 2xx body written to `file` (appended with `append`); other statuses come back buffered.
struct FileTransmission: Transmission {
    let file: URL
    let append: Bool

    nonisolated(nonsending) func send(_ request: HTTPRequest, through service: ServiceActor, tally: AttemptTally) async throws
        -> HTTPResponse
    {
        try await service.transmit(request, to: file, append: append, resends: tally)
    }

    nonisolated(nonsending) func mock(_ request: HTTPRequest, answer: HTTPResponse) async throws -> HTTPResponse {
        guard answer.isSuccess else { return answer }
        try FileOutput.write(answer.body, to: file, append: append)
        return HTTPResponse(head: answer.head)
    }

    func body(of output: HTTPResponse) -> Data? { output.isSuccess ? nil : output.body }
}

/// The head as soon as it arrives; the body as an `AsyncSequence`.
struct StreamedTransmission: Transmission {
    nonisolated(nonsending) func send(_ request: HTTPRequest, through service: ServiceActor, tally: AttemptTally) async throws
        -> HTTPStreamingResponse
    {
        try await service.transmitStreaming(request, resends: tally)
    }

    nonisolated(nonsending) func mock(_ request: HTTPRequest, answer: HTTPResponse) async throws -> HTTPStreamingResponse {
        HTTPStreamingResponse(head: answer.head, body: HTTPResponseBody(buffered: answer.body))
    }

    func head(of output: HTTPStreamingResponse) -> HTTPResponseHead { output.head }
    func body(of output: HTTPStreamingResponse) -> Data? { nil }

    nonisolated(nonsending) func settle(_ output: HTTPStreamingResponse) async throws -> (HTTPResponse, HTTPStreamingResponse) {
        let body = try await output.body.collect(upTo: 1 << 20)
        return (HTTPResponse(head: output.head, body: body),
                HTTPStreamingResponse(head: output.head, body: HTTPResponseBody(buffered: body)))
    }
}
