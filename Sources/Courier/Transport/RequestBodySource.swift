import CCurl
import DequeModule
import Foundation

/// Feeds a request body to curl's read callback. Loop-confined.
///
/// Data and file bodies can rewind (curl seeks back on a 307/308 redirect or a reused
/// connection that died). A streamed body holds at most `highWater` bytes: the producer
/// suspends until curl drains below `lowWater`, and curl pauses sending while the buffer is empty.
final class RequestBodySource {
    enum ReadResult: Equatable {
        case bytes(Int)
        /// Nothing buffered yet: pause sending until ``Transfer/bodyDataArrived()``.
        case pause
        case failed(TransportError)
    }

    private enum Storage {
        case data(Data)
        /// `base` is where the range starts in the file.
        case file(descriptor: Int32, base: Int64)
        case stream(StreamBuffer)
        /// Pieces read in turn; `current` is the one being read.
        case parts([RequestBodySource], current: Int)
    }

    private var storage: Storage
    /// The total size, or nil when a streamed body is sent chunked.
    let length: Int64?
    private var offset: Int64 = 0

    private init(storage: Storage, length: Int64?) {
        self.storage = storage
        self.length = length
        LiveObjects.created(.requestBody)
    }

    #if DEBUG
    deinit { LiveObjects.destroyed(.requestBody) }
    #endif

    /// Opens the body for sending; nil for an empty body.
    static func open(_ body: HTTPRequest.Body) throws(TransportError) -> RequestBodySource? {
        switch body.storage {
        case .empty:
            return nil
        case .data(let data):
            return RequestBodySource(storage: .data(data), length: Int64(data.count))
        case .file(let url, let range):
            let descriptor = Glibc.open(url.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw TransportError(.fileError, message: "cannot open \(url.path): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                Glibc.close(descriptor)
                throw TransportError(.fileError, message: "cannot stat \(url.path)")
            }
            let size = Int64(info.st_size)
            if let range, range.lowerBound < 0 || range.upperBound > size {
                Glibc.close(descriptor)
                throw TransportError(.fileError, message: "bytes \(range) are outside \(url.path) (\(size) bytes)")
            }
            let selected = range ?? 0..<size
            return RequestBodySource(storage: .file(descriptor: descriptor, base: selected.lowerBound),
                                     length: Int64(selected.count))
        case .stream(let length, _):
            if let length, length < 0 {
                throw TransportError(.invalidRequest, message: "a streamed body's declared length is negative (\(length))")
            }
            return RequestBodySource(storage: .stream(StreamBuffer(declaredLength: length)), length: length)
        case .parts(let parts):
            var sources: [RequestBodySource] = []
            for part in parts {
                let body: HTTPRequest.Body = switch part {
                case .data(let data): .data(data)
                case .file(let url, let range?): .file(url, range: range)
                case .file(let url, nil): .file(url)
                }
                do {
                    if let source = try open(body) { sources.append(source) }
                } catch {
                    for source in sources { source.close(reason: error) }
                    throw error
                }
            }
            return RequestBodySource(storage: .parts(sources, current: 0), length: sources.reduce(0) { $0 + ($1.length ?? 0) })
        }
    }

    var isStream: Bool {
        if case .stream = storage { return true }
        return false
    }

    /// Bytes handed to curl so far.
    var bytesSent: Int64 { offset }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        switch storage {
        case .data(let data):
            let start = Int(offset)
            let count = min(buffer.count, data.count - start)
            guard count > 0 else { return .bytes(0) }
            data.withUnsafeBytes { bytes in
                buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + start, byteCount: count)
            }
            offset += Int64(count)
            return .bytes(count)
        case .file(let descriptor, let base):
            let wanted = min(buffer.count, Int((length ?? 0) - offset))
            guard wanted > 0 else { return .bytes(0) }
            let count = pread(descriptor, buffer.baseAddress, wanted, off_t(base + offset))
            if count < 0 {
                return .failed(TransportError(.fileError, message: "read failed: \(String(cString: strerror(errno)))"))
            }
            if count == 0 {
                // The file ends before the length the request declared: it was shortened while
                // it was sent. Ending the body here would send fewer bytes than its Content-Length,
                // and the server would wait for the rest until a timeout.
                return .failed(TransportError(.bodyLengthMismatch,
                                              message: "the body's file ended after \(offset) of its \(length ?? 0) bytes: it was shortened while it was sent"))
            }
            offset += Int64(count)
            return .bytes(count)
        case .stream(let stream):
            let result = stream.read(into: buffer)
            if case .bytes(let count) = result { offset += Int64(count) }
            return result
        case .parts(let sources, var current):
            while current < sources.count {
                let result = sources[current].read(into: buffer)
                if case .bytes(0) = result {
                    current += 1
                    storage = .parts(sources, current: current)
                    continue
                }
                if case .bytes(let count) = result { offset += Int64(count) }
                return result
            }
            return .bytes(0)
        }
    }

    /// Moves back for a resend; a stream cannot.
    func rewind(to position: Int64) -> Bool {
        switch storage {
        case .data, .file:
            guard position >= 0, position <= (length ?? 0) else { return false }
            offset = position
            return true
        case .stream:
            return position == offset
        case .parts(let sources, _):
            guard position >= 0, position <= (length ?? 0) else { return false }
            var remaining = position
            var current = 0
            for (index, source) in sources.enumerated() {
                let size = source.length ?? 0
                let within = min(remaining, size)
                guard source.rewind(to: within) else { return false }
                if remaining >= size { remaining -= size; current = index + 1 } else { remaining = 0 }
            }
            storage = .parts(sources, current: min(current, sources.count))
            offset = position
            return true
        }
    }

    /// The stream buffer, for the producer's offers.
    var streamBuffer: StreamBuffer? {
        if case .stream(let buffer) = storage { return buffer }
        return nil
    }

    func close(reason: any Error) {
        switch storage {
        case .file(let descriptor, _):
            Glibc.close(descriptor)
            storage = .data(Data())
        case .stream(let stream):
            stream.close(reason: reason)
        case .parts(let sources, _):
            for source in sources { source.close(reason: reason) }
        case .data:
            break
        }
    }
}

/// The bounded buffer between a streamed body's producer task and curl's read callback. Loop-confined.
///
/// A body that declares its length must yield exactly that many bytes. curl stops reading at
/// the declared length and completes the request, so a stream with one byte too many would
/// arrive cut and still get its 200. The buffer therefore keeps the body's last byte back until
/// the producer has ended: a byte past the length, or an end before it, fails the transfer
/// while the server still waits for that byte, and it stores nothing.
final class StreamBuffer {
    static let highWater = 1 << 20
    static let lowWater = 256 << 10

    private var chunks = Deque<Data>()
    private var headOffset = 0
    private var buffered = 0
    private var producerFinished = false
    private var failure: (any Error)?
    /// The error the body's own sequence threw: the caller receives it as it was thrown (curl
    /// only learns that the read failed).
    private(set) var producerError: (any Error)?
    private var waitingProducer: UnsafeContinuation<Void, any Error>?
    /// The `Content-Length` sent, or nil for a chunked body.
    private let declaredLength: Int64?
    /// Bytes the producer has offered, and bytes handed to curl.
    private var offered: Int64 = 0
    private var handedOut: Int64 = 0
    /// Set by the transfer so new data can unpause curl.
    var onData: (() -> Void)?
    var producerTask: Task<Void, Never>?

    init(declaredLength: Int64? = nil) {
        self.declaredLength = declaredLength
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> RequestBodySource.ReadResult {
        if let failure {
            return .failed(failure as? TransportError
                ?? TransportError(.fileError, message: "request body stream failed: \(failure)"))
        }
        var room = buffer.count
        if let declaredLength, !producerFinished {
            // The last byte waits for the producer's end (see the type's comment).
            room = Int(clamping: min(Int64(room), max(0, declaredLength - 1 - handedOut)))
        }
        var written = 0
        while written < room, let chunk = chunks.first {
            let count = min(room - written, chunk.count - headOffset)
            chunk.withUnsafeBytes { bytes in
                (buffer.baseAddress! + written).copyMemory(from: bytes.baseAddress! + headOffset, byteCount: count)
            }
            written += count
            headOffset += count
            if headOffset == chunk.count {
                chunks.removeFirst()
                headOffset = 0
            }
        }
        buffered -= written
        handedOut += Int64(written)
        if buffered <= Self.lowWater, let producer = waitingProducer {
            waitingProducer = nil
            producer.resume()
        }
        if written > 0 { return .bytes(written) }
        return producerFinished ? .bytes(0) : .pause
    }

    /// A chunk from the producer; `continuation` resumes when there is room for more.
    func offer(_ chunk: Data, continuation: UnsafeContinuation<Void, any Error>) {
        if let failure {
            continuation.resume(throwing: failure)
            return
        }
        offered += Int64(chunk.count)
        if let declaredLength, offered > declaredLength {
            let error = TransportError(.bodyLengthMismatch,
                                       message: "the request body stream yielded more than its declared \(declaredLength) bytes")
            fail(error)
            continuation.resume(throwing: error)
            return
        }
        chunks.append(chunk)
        buffered += chunk.count
        if buffered > Self.highWater {
            waitingProducer = continuation
        } else {
            continuation.resume()
        }
        onData?()
    }

    /// The producer ended: `error` nil means the body is complete.
    func finish(error: (any Error)?) {
        guard !producerFinished, failure == nil else { return }
        if let error {
            failure = error
            producerError = error
        } else if let declaredLength, offered != declaredLength {
            failure = TransportError(.bodyLengthMismatch,
                                     message: "the request body stream ended after \(offered) of its declared \(declaredLength) bytes")
        } else {
            producerFinished = true
        }
        onData?()
    }

    /// Fails the body: curl's next read aborts the transfer with `error`.
    private func fail(_ error: TransportError) {
        guard failure == nil else { return }
        failure = error
        chunks.removeAll()
        buffered = 0
        onData?()
    }

    func close(reason: any Error) {
        if failure == nil && !producerFinished { failure = reason }
        chunks.removeAll()
        buffered = 0
        waitingProducer?.resume(throwing: reason)
        waitingProducer = nil
        producerTask?.cancel()
        producerTask = nil
        onData = nil
    }
}
