import Foundation

/// Decodes a gzip file into another, a megabyte at a time: the end of a download of a
/// gzip-stored object. The transport's ``ContentDecoder`` does the work, so a file is held to
/// what a response is: every member decoded (RFC 1952 §2.2), gzip's CRC-32 and length checked
/// by zlib, and data that stops before its end refused.
enum GzipDecoder {
    static func decode(_ source: URL, to destination: URL) throws {
        guard let input = FileHandle(forReadingAtPath: source.path) else {
            throw TransportError(.fileError, message: "cannot read \(source.path)")
        }
        defer { try? input.close() }
        guard FileManager.default.createFile(atPath: destination.path, contents: nil),
              let output = FileHandle(forWritingAtPath: destination.path) else {
            throw TransportError(.fileError, message: "cannot write \(destination.path)")
        }
        var closed = false
        defer { if !closed { try? output.close() } }
        let decoder = try ContentDecoder(.gzip)
        var writeError: (any Error)?
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            let complete = try chunk.withUnsafeBytes { bytes in
                try decoder.decode(bytes) { piece in
                    do { try output.write(contentsOf: piece) } catch { writeError = error }
                    return writeError == nil
                }
            }
            if let writeError { throw TransportError(.fileError, message: "cannot write \(destination.path): \(writeError)") }
            guard complete else { break }
        }
        guard decoder.isComplete else {
            throw TransportError(.protocolError, message: "the gzip data ended before its end (\(decoder.decodedCount) bytes decoded)")
        }
        closed = true
        try PartialDownload.close(output, destination)
    }
}
