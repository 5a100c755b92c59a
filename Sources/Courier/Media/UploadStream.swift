import Foundation

/// Bytes of a length not known in advance, to upload: any `AsyncSequence` of byte collections
/// (a generated stream, a network body), or a file descriptor such as a pipe or standard input.
///
/// ```swift
/// var upload = UploadParameters(stream: UploadStream(fileDescriptor: STDIN_FILENO), mimeType: "application/gzip")
/// ```
///
/// A stream is read once, in order, and at most two chunks ahead of what the server has
/// acknowledged: memory stays bounded whatever its length. It cannot be read again, so an upload
/// session that vanishes after bytes were acknowledged fails with ``UploadError/sessionExpired``
/// instead of restarting. To continue after a crash, give ``ServiceActor/resumeUpload(_:query:)``
/// a stream that starts at the session's ``UploadSession/offset``.
public struct UploadStream: Sendable {
    /// Pulls the next piece; nil at the end. Used by one task, in order.
    struct Iterator {
        let next: () async throws -> Data?
    }

    let makeIterator: @Sendable () -> Iterator

    /// The bytes of any asynchronous sequence of byte collections (`Data`, `[UInt8]`, …).
    public init<Bytes: AsyncSequence & Sendable>(_ bytes: Bytes) where Bytes.Element: DataProtocol {
        makeIterator = {
            var iterator = bytes.makeAsyncIterator()
            return Iterator { try await iterator.next().map { Data($0) } }
        }
    }

    /// Reads `descriptor` until end of file (a pipe's writer closing it), `readSize` bytes at a
    /// time, on a thread of its own: a blocking read never holds one of Swift's few cooperative
    /// threads. The descriptor is not closed.
    public init(fileDescriptor descriptor: Int32, readSize: Int = 1 << 20) {
        makeIterator = {
            let handle = DescriptorReader.Handle(DescriptorReader(descriptor: descriptor, readSize: readSize))
            return Iterator { try await handle.reader.next() }
        }
    }
}

/// Blocking reads of a descriptor on a thread of its own (not a Dispatch or cooperative thread,
/// which a pipe that waits for its writer would hold), into one reused buffer, each returned as
/// exactly the bytes read (a pipe gives 64 KiB at a time: a 1 MiB allocation per read would
/// cost 16 times the bytes). One read at a time is asked for, by one iterator.
private final class DescriptorReader: @unchecked Sendable {
    /// Owned by the iterator: when it goes, the thread is told to end after its current read.
    final class Handle: Sendable {
        let reader: DescriptorReader
        init(_ reader: DescriptorReader) { self.reader = reader }
        deinit { reader.stop() }
    }

    private let descriptor: Int32
    private let buffer: UnsafeMutableRawBufferPointer
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var request: CheckedContinuation<Data?, any Error>?
    private var stopped = false
    private var started = false
    /// The thread saw the end (or an error) and left: later reads answer nil.
    private var ended = false

    init(descriptor: Int32, readSize: Int) {
        self.descriptor = descriptor
        buffer = .allocate(byteCount: max(1, readSize), alignment: 16)
    }

    deinit { buffer.deallocate() }

    func next() async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if ended {
                condition.unlock()
                continuation.resume(returning: nil)
                return
            }
            request = continuation
            if !started {
                started = true
                let thread = Thread { self.serve() } // holds the reader until the thread ends
                thread.name = "courier-upload-stream"
                thread.start()
            }
            condition.signal()
            condition.unlock()
        }
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while request == nil && !stopped { condition.wait() }
            let continuation = request
            request = nil
            condition.unlock()
            guard let continuation else { return }
            let result = read()
            let last = if case .success(let data?) = result { data.isEmpty } else { true }
            if last {
                condition.lock()
                ended = true
                condition.unlock()
            }
            continuation.resume(with: result)
            if last { return }
        }
    }

    private func read() -> Result<Data?, any Error> {
        while true {
            let read = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if read > 0 { return .success(Data(bytes: buffer.baseAddress!, count: read)) }
            if read == 0 { return .success(nil) }
            if errno == EINTR { continue }
            return .failure(UploadError(code: .invalidParameters, message: "reading the upload stream failed: \(String(cString: strerror(errno)))"))
        }
    }
}
