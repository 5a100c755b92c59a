import DequeModule
import Foundation

/// A response whose body is still arriving, as ``ServiceActor/stream(_:options:)`` returns it.
public struct HTTPStreamingResponse: Sendable {
    public let head: HTTPResponseHead
    /// The body, chunk by chunk. Iterate it once.
    public let body: HTTPResponseBody

    public var status: Int { head.status }
    public var headers: HTTPHeaders { head.headers }
}

extension HTTPStreamingResponse: CustomStringConvertible {
    /// The head (``HTTPResponseHead/description``), without credentials.
    public var description: String { "\(head), streaming" }
}

/// A response body as an `AsyncSequence` of `Data` chunks, with backpressure.
public struct HTTPResponseBody: AsyncSequence, Sendable {
    public typealias Element = Data

    /// A transfer still receiving, or a body already in memory (a test handler's answer, or
    /// an error body the pipeline has read).
    let handle: (any ResponseBodySource)?
    let buffered: Data?

    init(handle: any ResponseBodySource) {
        self.handle = handle
        buffered = nil
    }

    init(buffered: Data) {
        handle = nil
        self.buffered = buffered
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let handle: (any ResponseBodySource)?
        var buffered: Data?
        /// Chunks taken from `handle` in one crossing and not yet returned.
        var pending = Deque<Data>()

        public mutating func next() async throws -> Data? {
            if let handle {
                if let chunk = pending.popFirst() { return chunk }
                guard let chunks = try await handle.next() else { return nil }
                pending.append(contentsOf: chunks)
                return pending.popFirst()
            }
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

/// Where a streamed body's chunks come from: the service's transfer (``ResponseStreamHandle``,
/// in Service/), so this layer of values holds no actor.
protocol ResponseBodySource: Sendable {
    /// The chunks that arrived since the last call (at least one), or nil at the body's end.
    func next() async throws -> [Data]?
}
