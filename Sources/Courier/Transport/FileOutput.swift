import Foundation

/// Writes a 2xx response body to disk as it arrives. Loop-confined.
///
/// The file is opened at the first body byte, so an error status never clobbers an existing
/// file. A failed download leaves what was written, which is what a Range resume needs.
final class FileOutput {
    let path: String
    /// Append to an existing partial file instead of truncating it.
    let append: Bool
    private var descriptor: Int32 = -1
    private(set) var written: Int64 = 0

    init(path: String, append: Bool = false) {
        self.path = path
        self.append = append
    }

    /// Writes every byte or returns why it could not.
    func write(_ bytes: UnsafeRawBufferPointer) -> TransportError? {
        if descriptor < 0, let error = openFile() { return error }
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                return TransportError(.fileError, message: "write to \(path) failed: \(String(cString: strerror(errno)))")
            }
            offset += count
        }
        written += Int64(bytes.count)
        return nil
    }

    /// Creates the file if no byte came (an empty 2xx body) and closes it. A file system that
    /// writes back later (NFS) may report a failed write only here: the body is not on disk,
    /// so the transfer fails.
    func finish() -> TransportError? {
        if descriptor < 0, let error = openFile() { return error }
        let error = Self.close(descriptor, path: path)
        descriptor = -1
        LiveObjects.destroyed(.openFile)
        return error
    }

    /// Closes `descriptor`, a file written to: nil, or why the close failed (the write-back's error).
    static func close(_ descriptor: Int32, path: String) -> TransportError? {
        guard Glibc.close(descriptor) != 0 else { return nil }
        return TransportError(.fileError, message: "closing \(path) failed: \(String(cString: strerror(errno)))")
    }

    func close() {
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
            LiveObjects.destroyed(.openFile)
        }
    }

    /// Writes a body already in memory the way a transfer would (a test handler's answer).
    static func write(_ data: Data, to file: URL, append: Bool) throws(TransportError) {
        let output = FileOutput(path: file.path, append: append)
        defer { output.close() }
        let error = data.withUnsafeBytes { output.write($0) }
        if let error { throw error }
        if let error = output.finish() { throw error }
    }

    private func openFile() -> TransportError? {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)
        descriptor = Glibc.open(path, flags, 0o644)
        guard descriptor >= 0 else {
            return TransportError(.fileError, message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        LiveObjects.created(.openFile)
        return nil
    }
}
