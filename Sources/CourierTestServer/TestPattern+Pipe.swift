import Foundation

extension TestPattern {
    /// A real pipe carrying pattern bytes `offset..<offset + count`, written by a thread of its own
    /// in `piece`-byte writes, `pause` apart; returns the read end (the caller closes it). With
    /// `holdAt`, the writer stops after that many bytes until `gate` returns true. The writer
    /// closes its end when done, or when the reader has gone.
    public static func pipe(count: Int, offset: Int = 0, piece: Int = 64 << 10, pause: Duration = .zero,
                            holdAt: Int? = nil, gate: @escaping @Sendable () -> Bool = { true }) -> Int32 {
        var ends: [Int32] = [0, 0]
        precondition(Glibc.pipe(&ends) == 0, "pipe(2) failed")
        let (reader, writer) = (ends[0], ends[1])
        _ = fcntl(reader, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writer, F_SETFD, FD_CLOEXEC)
        let thread = Thread {
            defer { close(writer) }
            var position = 0
            while position < count {
                if let holdAt, position >= holdAt { while !gate() { usleep(1000) } }
                let bytes = TestPattern.bytes(count: min(piece, count - position, (holdAt ?? .max) > position ? (holdAt ?? .max) - position : .max),
                                              offset: offset + position)
                var written = 0
                while written < bytes.count {
                    let result = bytes.withUnsafeBytes { write(writer, $0.baseAddress! + written, bytes.count - written) }
                    if result < 0 { if errno == EINTR { continue } else { return } } // EPIPE: the reader left
                    written += result
                }
                position += bytes.count
                if pause > .zero { Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds)) }
            }
        }
        thread.start()
        return reader
    }
}
