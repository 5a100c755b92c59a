import CCourierChecksum
import CourierSync
import DequeModule
import Foundation

/// The bytes of an ``UploadStream`` between what the server acknowledged and what was read
/// ahead, by absolute offset. A producer task reads the stream into it, waiting while it is
/// full; the upload takes chunks from it and releases them once acknowledged, since a server
/// may keep only part of a chunk and ask for the rest again.
final class UploadStreamBuffer: Sendable {
    private struct State {
        var segments = Deque<Data>()
        /// Offset of the first buffered byte.
        var start: Int64
        /// Offset just past the last buffered byte.
        var end: Int64
        var ended = false
        var failure: (any Error)?
        /// Bytes the producer may hold before it waits.
        var capacity: Int64
        var consumer: (through: Int64, continuation: CheckedContinuation<Void, any Error>)?
        var producer: CheckedContinuation<Void, any Error>?
        var cancelled = false
        /// Bytes of the stream still to drop as they arrive: the server holds them already (a
        /// resumed upload whose server is ahead of the saved offset).
        var discard: Int64 = 0
        /// CRC32C of every byte before `start`.
        var droppedCRC32C: UInt32

        mutating func drop(_ bytes: Data) {
            droppedCRC32C = bytes.withUnsafeBytes { courier_crc32c_update(droppedCRC32C, $0.baseAddress, $0.count) }
        }

        var consumerReady: Bool { consumer.map { end >= $0.through || ended || failure != nil || cancelled } ?? false }
    }

    private let state: LockedValue<State>

    /// A buffer whose first byte is the stream's byte `start` (nonzero when resuming, with the
    /// CRC32C of the bytes before it).
    init(start: Int64, crc32cBeforeStart: UInt32 = 0, capacity: Int64) {
        state = LockedValue(State(start: start, end: start, capacity: max(1, capacity), droppedCRC32C: crc32cBeforeStart))
    }

    // MARK: Producer

    /// Adds the next bytes of the stream; waits while the buffer holds `capacity` bytes.
    func append(_ data: Data) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (consumer, decision) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, WaitDecision) in
                    if state.cancelled { return (nil, .cancelled) }
                    var data = data
                    if state.discard > 0 {
                        let count = Int(min(Int64(data.count), state.discard))
                        state.drop(data.prefix(count))
                        state.discard -= Int64(count)
                        data = data.dropFirst(count)
                    }
                    if !data.isEmpty {
                        state.segments.append(data)
                        state.end += Int64(data.count)
                    }
                    let consumer = state.consumerReady ? state.consumer.take()?.continuation : nil
                    guard state.end - state.start >= state.capacity else { return (consumer, .proceed) }
                    state.producer = continuation
                    return (consumer, .parked)
                }
                consumer?.resume()
                decision.settle(continuation)
            }
        } onCancel: {
            cancel()
        }
    }

    /// The stream ended (`failure` nil) or failed.
    func finish(throwing failure: (any Error)? = nil) {
        let consumer = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.ended = true
            state.failure = failure
            return state.consumer.take()?.continuation
        }
        consumer?.resume()
    }

    // MARK: Consumer

    /// Waits until bytes up to `through` (exclusive) are buffered or the stream ended; returns
    /// the offset just past the buffered bytes and whether the stream ended there.
    func fill(through: Int64) async throws -> (available: Int64, ended: Bool) {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (ready, producer) = state.withLock { state -> (Bool, CheckedContinuation<Void, any Error>?) in
                    // Whatever the consumer needs at once must fit, or both would wait forever.
                    state.capacity = max(state.capacity, through - state.start)
                    let producer = state.end - state.start < state.capacity ? state.producer.take() : nil
                    if state.end >= through || state.ended || state.failure != nil || state.cancelled { return (true, producer) }
                    state.consumer = (through, continuation)
                    return (false, producer)
                }
                producer?.resume()
                if ready { continuation.resume() }
            }
        } onCancel: {
            cancel()
        }
        return try state.withLock { state in
            if let failure = state.failure { throw failure }
            if state.cancelled { throw CancellationError() }
            return (state.end, state.ended)
        }
    }

    /// Buffered bytes `range`, as the buffer's own pieces (no copy: a request body of parts sends them).
    func pieces(_ range: Range<Int64>) throws(UploadError) -> [Data] {
        let pieces = state.withLock { state -> [Data]? in
            guard range.lowerBound >= state.start, range.upperBound <= state.end else { return nil }
            var result: [Data] = []
            var position = state.start
            for segment in state.segments {
                let segmentEnd = position + Int64(segment.count)
                defer { position = segmentEnd }
                guard segmentEnd > range.lowerBound else { continue }
                guard position < range.upperBound else { break }
                let from = Int(max(range.lowerBound, position) - position)
                let to = Int(min(range.upperBound, segmentEnd) - position)
                result.append(segment[(segment.startIndex + from)..<(segment.startIndex + to)])
            }
            return result
        }
        guard let pieces else {
            throw UploadError(code: .protocolViolation, message: "bytes \(range) of the stream are not buffered (from \(start))")
        }
        return pieces
    }

    /// A copy of buffered bytes `range`.
    func bytes(_ range: Range<Int64>) throws(UploadError) -> Data {
        try pieces(range).reduce(into: Data(capacity: range.count)) { $0.append($1) }
    }

    /// Drops the bytes before `offset`: the server has them. Bytes not read yet are dropped as
    /// they arrive.
    func release(before offset: Int64) {
        let producer = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            while let first = state.segments.first, state.start < offset {
                let count = Int64(first.count)
                if state.start + count <= offset {
                    state.drop(first)
                    state.segments.removeFirst()
                    state.start += count
                } else {
                    let cut = Int(offset - state.start)
                    state.drop(first.prefix(cut))
                    state.segments[0] = first.dropFirst(cut)
                    state.start = offset
                }
            }
            if state.start < offset { // nothing buffered is left: the rest is still to come
                state.discard += offset - state.start
                state.start = offset
                state.end = offset
            }
            return state.end - state.start < state.capacity ? state.producer.take() : nil
        }
        producer?.resume()
    }

    /// The CRC32C of the stream's bytes before ``start``, the ones the server acknowledged.
    var acknowledgedCRC32C: UInt32 { state.withLock { $0.droppedCRC32C } }

    /// Offset of the first byte still buffered.
    var start: Int64 { state.withLock { $0.start } }

    func setCapacity(_ capacity: Int64) {
        let producer = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.capacity = max(1, capacity)
            return state.end - state.start < state.capacity ? state.producer.take() : nil
        }
        producer?.resume()
    }

    /// Ends both sides' waits with `CancellationError`.
    func cancel() {
        let (consumer, producer) = state.withLock { state in
            state.cancelled = true
            return (state.consumer.take()?.continuation, state.producer.take())
        }
        consumer?.resume(throwing: CancellationError())
        producer?.resume(throwing: CancellationError())
    }
}
