import DequeModule
import Foundation

/// Chunks of a streamed response between curl's write callback and the consumer. Loop-confined.
///
/// Holds the head continuation until the head is known, then body chunks until the consumer
/// takes them. The transfer pauses receiving when too many bytes wait here.
final class ResponseBodyBuffer {
    private var headContinuation: UnsafeContinuation<HTTPResponseHead, any Error>?
    private var chunks = Deque<Data>()
    private var waiting: UnsafeContinuation<[Data]?, any Error>?
    private var end: Result<Void, any Error>?

    init() {
        LiveObjects.created(.responseBuffer)
    }

    #if DEBUG
    deinit { LiveObjects.destroyed(.responseBuffer) }
    #endif

    func awaitHead(_ continuation: UnsafeContinuation<HTTPResponseHead, any Error>) {
        if case .failure(let error) = end {
            continuation.resume(throwing: error) // the transfer failed before anyone waited
        } else {
            headContinuation = continuation
        }
    }

    func deliverHead(_ head: HTTPResponseHead) {
        headContinuation?.resume(returning: head)
        headContinuation = nil
    }

    func failHead(_ error: any Error) {
        headContinuation?.resume(throwing: error)
        headContinuation = nil
        end = .failure(error)
    }

    /// Returns true when a waiting consumer took the chunk at once.
    func append(_ chunk: Data) -> Bool {
        if let consumer = waiting {
            waiting = nil
            consumer.resume(returning: [chunk])
            return true
        }
        chunks.append(chunk)
        return false
    }

    /// The transfer ended: `error` nil is a clean end of body.
    func finish(_ error: (any Error)?) {
        guard end == nil else { return }
        end = error.map { .failure($0) } ?? .success(())
        if let consumer = waiting {
            waiting = nil
            if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
        }
    }

    /// Every buffered chunk, or nil after resolving `continuation` with the end or storing it to
    /// wait. All of them at once: a consumer slower than the network then crosses to the loop
    /// once per backlog instead of once per 16 KiB chunk.
    func take(orWait continuation: UnsafeContinuation<[Data]?, any Error>) -> [Data]? {
        if !chunks.isEmpty {
            defer { chunks.removeAll(keepingCapacity: true) }
            return Array(chunks)
        }
        switch end {
        case .success: continuation.resume(returning: nil)
        case .failure(let error): continuation.resume(throwing: error)
        case nil: waiting = continuation
        }
        return nil
    }

    var isFinished: Bool { end != nil && chunks.isEmpty }
}
