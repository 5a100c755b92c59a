import Foundation

/// A response whose body is still arriving, as ``ServiceActor/stream(_:options:)`` returns it.
public struct HTTPStreamingResponse: Sendable {
    public let head: HTTPResponseHead
    /// The body, chunk by chunk. Iterate it once.
    public let body: HTTPResponseBody

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
}

/// A response body as an `AsyncSequence` of `Data` chunks, with backpressure.
public struct HTTPResponseBody: AsyncSequence, Sendable {
    public typealias Element = Data

    /// A transfer still receiving, or a body already in memory (a test handler's answer, or
    /// an error body the pipeline has read).
    let handle: ResponseStreamHandle?
    let buffered: Data?

    init(handle: ResponseStreamHandle) {
        self.handle = handle
        buffered = nil
    }

    init(buffered: Data) {
        handle = nil
        self.buffered = buffered
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let handle: ResponseStreamHandle?
        var buffered: Data?

        public mutating func next() async throws -> Data? {
            if let handle { return try await handle.next() }
            defer { buffered = nil }
            return buffered?.isEmpty == false ? buffered : nil
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handle: handle, buffered: buffered)
    }

    /// Collects the whole body, failing with ``TransportError/bodyTooLarge`` past `maxBytes`.
    public func collect(upTo maxBytes: Int) async throws -> Data {
        var data = Data()
        for try await chunk in self {
            guard data.count + chunk.count <= maxBytes else {
                throw TransportError(.bodyTooLarge, message: "response body exceeds \(maxBytes) bytes")
            }
            data.append(chunk)
        }
        return data
    }
}

/// Keeps a streamed transfer alive while its body is referenced; cancels it when dropped unfinished.
final class ResponseStreamHandle: Sendable {
    let service: ServiceActor
    let transfer: LoopBound<Transfer>
    let buffer: LoopBound<ResponseBodyBuffer>

    init(service: ServiceActor, transfer: LoopBound<Transfer>, buffer: LoopBound<ResponseBodyBuffer>) {
        self.service = service
        self.transfer = transfer
        self.buffer = buffer
        LiveObjects.created(.streamHandle)
    }

    func next() async throws -> Data? {
        try await service.nextChunk(transfer, buffer)
    }

    deinit {
        LiveObjects.destroyed(.streamHandle)
        let transfer = transfer
        service.loop.execute {
            transfer.value.cancel(with: TransportError(.cancelled, message: "response body dropped before its end"))
        }
    }
}
