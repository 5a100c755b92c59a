import Dispatch
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
            let reader = DescriptorReader(descriptor: descriptor, readSize: readSize)
            return Iterator {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                    reader.queue.async { continuation.resume(with: reader.read()) }
                }
            }
        }
    }
}

/// Blocking reads of a descriptor into one reused buffer, each returned as exactly the bytes read
/// (a pipe gives 64 KiB at a time: a 1 MiB allocation per read would cost 16 times the bytes).
/// Only its own serial queue touches the buffer.
private final class DescriptorReader: @unchecked Sendable {
    let descriptor: Int32
    let queue: DispatchQueue
    private let buffer: UnsafeMutableRawBufferPointer

    init(descriptor: Int32, readSize: Int) {
        self.descriptor = descriptor
        queue = DispatchQueue(label: "courier.upload-stream.\(descriptor)")
        buffer = .allocate(byteCount: max(1, readSize), alignment: 16)
    }

    deinit { buffer.deallocate() }

    func read() -> Result<Data?, any Error> {
        while true {
            let read = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if read > 0 { return .success(Data(bytes: buffer.baseAddress!, count: read)) }
            if read == 0 { return .success(nil) }
            if errno == EINTR { continue }
            return .failure(UploadError(.invalidParameters, message: "reading the upload stream failed: \(String(cString: strerror(errno)))"))
        }
    }
}
