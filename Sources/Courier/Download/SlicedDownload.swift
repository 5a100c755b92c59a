import CCourierChecksum
import CourierSync
import Foundation

/// A download as concurrent `Range` slices into one preallocated data file: each slice a
/// pipeline run of its own (retries resume the slice where its bytes end), each hashed with
/// CRC32C as it arrives, the CRCs combined and checked against `x-goog-hash` at the end. The
/// record beside the file keeps each slice's progress, so another process resumes every slice.
struct SlicedDownload {
    let service: ServiceActor
    let base: HTTPRequest
    let file: URL
    let options: DownloadOptions
    let context: RequestContext
    /// The object's validator, size and hash, and the slices (from the first answer, or the record on disk).
    let record: PartialDownload

    /// Progress shared by the slices: bytes on disk and the CRC32C of those bytes, per slice.
    final class Progress: Sendable {
        struct State {
            var slices: [PartialDownload.Slice]
            var crc32c: [UInt32]
            var unsaved: Int64 = 0
            var head: HTTPResponseHead?
        }

        let state: LockedValue<State>

        init(slices: [PartialDownload.Slice], crc32c: [UInt32]) {
            state = LockedValue(State(slices: slices, crc32c: crc32c))
        }

        var written: Int64 { state.withLock { $0.slices.reduce(0) { $0 + $1.written } } }
    }

    /// Runs the slices: fresh ones (`nil`: the record's, nothing written) or resumed ones.
    func run(slices resumed: [PartialDownload.Slice]?) async throws -> DownloadResult {
        guard let total = record.totalBytes, let etag = record.etag, let planned = record.slices else {
            throw TransportError(.protocolError, message: "a sliced download needs the object's size and ETag")
        }
        let data = PartialDownload.dataFile(for: file)
        let slices = resumed ?? planned
        if resumed == nil {
            // Preallocated, so each slice writes at its own offset.
            _ = FileManager.default.createFile(atPath: data.path, contents: nil)
            guard truncate(data.path, off_t(total)) == 0 else {
                throw TransportError(.fileError, message: "cannot size \(data.path): \(String(cString: strerror(errno)))")
            }
            try record.write(for: file)
        }
        // A resumed slice's bytes on disk are hashed again: the CRC continues from them.
        let crc32c = try slices.map { slice -> UInt32 in
            guard slice.written > 0 else { return 0 }
            let accumulator = ChecksumAccumulator(md5: false)
            try ChecksumAccumulator.file(data, range: slice.start..<(slice.start + slice.written), into: accumulator)
            return accumulator.finish().crc32c
        }
        let progress = Progress(slices: slices, crc32c: crc32c)
        let resumedFrom = progress.written
        let descriptor = open(data.path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw TransportError(.fileError, message: "cannot write \(data.path)") }
        var closed = false
        defer { if !closed { close(descriptor) } }

        var accepting = context
        accepting.accepts = { (200..<300).contains($0) }
        let pipeline = service.pipeline(accepting)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in slices.indices where slices[index].written < slices[index].end - slices[index].start {
                    let transmission = SliceTransmission(index: index, descriptor: descriptor, progress: progress, total: total,
                                                         options: options, saving: saving)
                    group.addTask {
                        _ = try await pipeline.run(transmission) {
                            let slice = progress.state.withLock { $0.slices[index] }
                            var request = base
                            request.url = PartialDownload.pinned(base.url, generation: record.generation)
                            request.headers["Range"] = "bytes=\(slice.start + slice.written)-\(slice.end - 1)"
                            request.headers["If-Match"] = etag
                            return request
                        }
                    }
                }
                try await group.waitForAll()
            }
        } catch let error as APIError where error.status == 404 && PartialDownload.pinned(base.url, generation: record.generation) != base.url {
            throw PartialDownload.objectChanged(file, generation: record.generation, status: 404)
        } catch {
            save(progress)
            throw error
        }
        closed = true
        if let error = FileOutput.close(descriptor, path: data.path) { throw error }
        let state = progress.state.withLock { $0 }
        if options.verifyIntegrity, let header = state.head?.headers["x-goog-hash"] ?? record.googHash {
            let pieces = zip(state.slices, state.crc32c).map { Checksums(md5: nil, crc32c: $1, byteCount: $0.end - $0.start) }
            var local = Checksums.concatenating(pieces)
            if !Checksums.parseGoogHash(header).contains(where: { $0.0 == "crc32c" }) {
                // MD5 alone: it cannot be combined, so the file is read once more.
                let accumulator = ChecksumAccumulator()
                try ChecksumAccumulator.file(data, range: 0..<total, into: accumulator)
                local = accumulator.finish()
            }
            try ServiceActor.verify(local, against: header, file: file)
        }
        try ServiceActor.complete(file, decoding: options.contentDecoding)
        let head = state.head ?? HTTPResponseHead(status: 200, headers: [:], url: base.url)
        return DownloadResult(file: file, bytes: total, resumedFrom: resumedFrom, slices: slices.count, head: head)
    }

    /// Writes the slices' progress beside the file.
    private var saving: @Sendable (Progress) -> Void {
        { [record, file] progress in
            var current = record
            current.slices = progress.state.withLock { $0.slices }
            try? current.write(for: file)
        }
    }

    private func save(_ progress: Progress) { saving(progress) }
}

/// One slice's response: a 206 for exactly the bytes asked, written at their offset and hashed in order.
struct SliceTransmission: DiskTransmission {
    let index: Int
    let descriptor: Int32
    let progress: SlicedDownload.Progress
    let total: Int64
    let options: DownloadOptions
    let saving: @Sendable (SlicedDownload.Progress) -> Void

    /// The record is rewritten after this many bytes (all slices together).
    static let saveEvery: Int64 = 8 << 20

    func bytesKept() -> Int64 { progress.state.withLock { $0.slices[index].written } }

    func write(_ response: HTTPStreamingResponse, of request: HTTPRequest) async throws -> DownloadAttempt {
        let head = response.head
        let slice = progress.state.withLock { $0.slices[index] }
        var position = slice.start + slice.written
        guard head.isSuccess else {
            return DownloadAttempt(head: head, startedAt: position, errorBody: (try? await response.body.collect(upTo: 1 << 20)) ?? Data())
        }
        guard head.status == 206, head.headers["Content-Range"]?.hasPrefix("bytes \(position)-\(slice.end - 1)/") == true else {
            throw TransportError(.protocolError, message: "slice \(index) asked for bytes \(position)-\(slice.end - 1) and got \(head.status) \(head.headers["Content-Range"] ?? "without Content-Range")")
        }
        progress.state.withLock { if $0.head == nil { $0.head = head } }
        defer { saving(progress) }
        for try await chunk in response.body {
            guard position + Int64(chunk.count) <= slice.end else {
                throw TransportError(.protocolError, message: "slice \(index) received more than its \(slice.end - slice.start) bytes")
            }
            try chunk.withUnsafeBytes { bytes in
                var done = 0
                while done < bytes.count {
                    let result = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(position) + off_t(done))
                    if result < 0 {
                        if errno == EINTR { continue }
                        throw TransportError(.fileError, message: "cannot write the download: \(String(cString: strerror(errno)))")
                    }
                    done += result
                }
            }
            let crc = progress.state.withLock { state -> UInt32 in
                state.slices[index].written += Int64(chunk.count)
                state.unsaved += Int64(chunk.count)
                return state.crc32c[index]
            }
            // Hashed outside the lock; only this slice's task touches its CRC.
            let next = chunk.withUnsafeBytes { courier_crc32c_update(crc, $0.baseAddress, $0.count) }
            let (written, save) = progress.state.withLock { state -> (Int64, Bool) in
                state.crc32c[index] = next
                let save = state.unsaved >= Self.saveEvery
                if save { state.unsaved = 0 }
                return (state.slices.reduce(0) { $0 + $1.written }, save)
            }
            position += Int64(chunk.count)
            if save { saving(progress) }
            options.progress?(DownloadProgress(bytesWritten: written, totalBytes: total))
        }
        return DownloadAttempt(head: head, startedAt: slice.start + slice.written)
    }
}
