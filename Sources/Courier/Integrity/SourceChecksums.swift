import Foundation

/// MD5 and CRC32C of the whole source: a file's or data's computed once in the background while
/// chunks travel, a stream's as it is read.
///
/// The source's bytes are fixed, so hashing them in order gives exactly what the server must hold
/// at the end, whatever it acknowledged on the way (partial 308s, resends, restarts from zero).
///
/// The hashing ends with the upload: ``stop()`` cancels it and waits for it, and it stops within
/// a MiB once cancelled. It used to run on over a large file for seconds after the upload had
/// failed or been cancelled, reading the file and holding it open.
final class SourceChecksums: Sendable {
    private let task: Task<Checksums?, any Error>
    /// Whether `task` is this object's hashing (a file's or data's), which ``stop()`` waits for.
    /// A stream's is the task that reads the caller's sequence, which may not heed cancellation.
    private let ownsTask: Bool

    init(task: Task<Checksums?, any Error>) {
        self.task = task
        ownsTask = false
    }

    init(_ source: UploadParameters.Source, count: Int64) {
        // Detached, at utility priority, so the caller's chunks go out while it runs; it does not
        // inherit the caller's cancellation, hence the handler in `result` and `stop()`.
        task = Task.detached(priority: .utility) {
            let accumulator = ChecksumAccumulator()
            switch source {
            case .file(let url): try ChecksumAccumulator.file(url, range: 0..<count, into: accumulator)
            case .filePart(let url, let range): try ChecksumAccumulator.file(url, range: range, into: accumulator)
            case .data(let data): try accumulator.update(cancellable: data)
            case .stream: return nil
            }
            return accumulator.finish()
        }
        ownsTask = true
    }

    /// The checksums; cancelling the waiting task cancels the hashing.
    var result: Checksums {
        get async throws {
            let value = try await withTaskCancellationHandler { try await task.value } onCancel: { [task] in task.cancel() }
            guard let checksums = value else { throw UploadError(code: .protocolViolation, message: "no checksums") }
            return checksums
        }
    }

    /// Cancels the hashing and, when it is this object's, waits until it has ended.
    func stop() async {
        task.cancel()
        if ownsTask { _ = await task.result }
    }
}
