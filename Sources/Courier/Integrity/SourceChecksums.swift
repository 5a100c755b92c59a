import Foundation

/// MD5 and CRC32C of the whole source: a file's or data's computed once in the background while
/// chunks travel, a stream's as it is read.
///
/// The source's bytes are fixed, so hashing them in order gives exactly what the server must hold
/// at the end, whatever it acknowledged on the way (partial 308s, resends, restarts from zero).
final class SourceChecksums: Sendable {
    private let task: Task<Checksums?, any Error>

    init(task: Task<Checksums?, any Error>) {
        self.task = task
    }

    convenience init(_ source: UploadParameters.Source, count: Int64) {
        self.init(task: Task.detached(priority: .utility) {
            let accumulator = ChecksumAccumulator()
            switch source {
            case .file(let url): try ChecksumAccumulator.file(url, range: 0..<count, into: accumulator)
            case .filePart(let url, let range): try ChecksumAccumulator.file(url, range: range, into: accumulator)
            case .data(let data): accumulator.update(data)
            case .stream: return nil
            }
            return accumulator.finish()
        })
    }

    var result: Checksums {
        get async throws {
            guard let checksums = try await task.value else { throw UploadError(code: .protocolViolation, message: "no checksums") }
            return checksums
        }
    }

    func cancel() { task.cancel() }
}
