import CourierSync
import Foundation

extension ServiceActor {
    /// Downloads the media of `query` (`alt=media`) to `file`, resuming a partial download and
    /// recovering from dropped connections with `Range`; the body never sits in memory. A large
    /// object runs as concurrent `Range` slices (``DownloadOptions/slicing``). The bytes reach
    /// `file` only whole and verified against the server's `x-goog-hash`; until then they are in
    /// `<file>.courier-download`. The requests take the one pipeline: credentials (refreshed once
    /// after a 401), limits, the test handler, retries by the service's policy, logs, events,
    /// metrics and ``cancel(requestID:)`` with the query's request ID.
    public nonisolated func downloadFile<Response>(_ query: Query<Response>, to file: URL,
                                                   options: DownloadOptions = DownloadOptions()) async throws -> DownloadResult {
        var media = query
        media.downloadsMedia = true
        let execution = QueryExecution(service: self, query: media, operation: .download)
        let request = try execution.prepare(media)
        return try await operation(execution.context) { [self] in
            try await downloadFile(request, to: file, options: options, context: execution.context)
        }
    }

    /// Downloads `request`'s 2xx body to `file` (see ``downloadFile(_:to:options:)-(Query<Response>,_,_)``).
    /// `requestOptions` name it for ``cancel(requestID:)`` and may add the service's credentials;
    /// retries follow the service's policy unless they say otherwise.
    public nonisolated func downloadFile(_ request: HTTPRequest, to file: URL, options: DownloadOptions = DownloadOptions(),
                                         requestOptions: RequestOptions = RequestOptions()) async throws -> DownloadResult {
        var raw = rawContext(requestOptions, operation: .download, retry: configuration.retry)
        raw.throwsRefusedStatus = true
        let context = raw
        return try await operation(context) { [self] in
            try await downloadFile(request, to: file, options: options, context: context)
        }
    }

    /// One stream, unless the first answer shows an object worth slicing (or a sliced download is
    /// being resumed). Every attempt asks the partial data where to continue (`Range` and
    /// `If-Range` from its record), so the pipeline's retries resume instead of starting over.
    private nonisolated func downloadFile(_ request: HTTPRequest, to file: URL, options: DownloadOptions,
                                          context: RequestContext) async throws -> DownloadResult {
        // Ranges are this method's own (resumption, slices): a caller's would be taken for a
        // resumption and fail obscurely ("cannot write", an APIError 206 holding the bytes).
        if let name = ["Range", "If-Range"].first(where: { request.headers[$0] != nil }) {
            throw TransportError(.invalidRequest, message: "downloadFile sets \(name) itself to resume and slice; for part of an object, send the request with `stream`, `send` or `execute`")
        }
        // The stored bytes travel, whatever the object's encoding: see `DownloadOptions.ContentDecoding`.
        var base = request
        base.keepsContentEncoding = true
        if !options.resume { PartialDownload.remove(for: file) }
        if options.resume, let partial = PartialDownload.read(for: file, url: base.url), let slices = partial.slices {
            return try await SlicedDownload(service: self, base: base, file: file, options: options, context: context,
                                            record: partial).run(slices: slices)
        }
        var accepting = context
        accepting.accepts = { (200..<300).contains($0) || $0 == 416 } // 416: the partial data was already whole
        let offsets = LockedValue<[Int64]>([]) // where each attempt asked to start
        let transmission = DownloadTransmission(file: file, options: options, url: base.url)
        let attempt = try await pipeline(accepting).run(transmission) {
            var request = base
            let partial = options.resume ? PartialDownload.read(for: file, url: base.url) : nil
            let offset = partial.map { _ in PartialDownload.size(of: PartialDownload.dataFile(for: file)) } ?? 0
            offsets.withLock { $0.append(offset) }
            if offset > 0, let validator = partial?.etag ?? partial?.lastModified {
                request.headers["Range"] = "bytes=\(offset)-"
                request.headers["If-Range"] = validator
                request.url = PartialDownload.pinned(base.url, generation: partial?.generation)
            }
            return request
        }
        if let record = attempt.slice {
            return try await SlicedDownload(service: self, base: base, file: file, options: options, context: context,
                                            record: record).run(slices: nil)
        }
        let data = PartialDownload.dataFile(for: file)
        if options.verifyIntegrity, let header = attempt.head.headers["x-goog-hash"] {
            let accumulator = ChecksumAccumulator()
            try ChecksumAccumulator.file(data, range: 0..<PartialDownload.size(of: data), into: accumulator)
            try Self.verify(accumulator.finish(), against: header, file: file)
        }
        let bytes = PartialDownload.size(of: data)
        try Self.complete(file, decoding: options.contentDecoding)
        // After failed attempts, where the first one began; else where the answer let it begin
        // (0 when the object changed and came whole).
        let asked = offsets.withLock { $0 }
        return DownloadResult(file: file, bytes: bytes, resumedFrom: asked.count > 1 ? asked[0] : attempt.startedAt,
                              slices: 1, head: attempt.head)
    }

    /// Local checksums against `x-goog-hash`; a mismatch discards the data (resuming it would only
    /// keep the corruption) and throws.
    static func verify(_ local: Checksums, against header: String, file: URL) throws {
        if let mismatch = local.mismatch(withGoogHash: header) {
            PartialDownload.remove(for: file)
            throw IntegrityError(message: "\(mismatch) (downloaded \(local.byteCount) bytes)")
        }
    }

    /// Puts the verified data under the file's name, replacing what was there, in one rename;
    /// decoded first when it is gzip-stored and `decoding` asks for the content.
    static func complete(_ file: URL, decoding: DownloadOptions.ContentDecoding) throws {
        let data = PartialDownload.dataFile(for: file)
        let record = (try? Data(contentsOf: PartialDownload.sidecar(for: file))).flatMap { try? JSONDecoder().decode(PartialDownload.self, from: $0) }
        if decoding == .decoded, let encoding = record?.contentEncoding, encoding != "identity" {
            guard encoding == "gzip" || encoding == "x-gzip" else {
                throw TransportError(.protocolError, message: "the object came with Content-Encoding \(encoding), which a download cannot decode; ask for the stored bytes")
            }
            let decoded = data.appendingPathExtension("decoded")
            do {
                try GzipDecoder.decode(data, to: decoded)
            } catch {
                try? FileManager.default.removeItem(at: decoded)
                PartialDownload.remove(for: file) // verified bytes that do not decode: nothing to resume
                throw error
            }
            try? FileManager.default.removeItem(at: data)
            guard rename(decoded.path, data.path) == 0 else {
                throw TransportError(.fileError, message: "cannot move the decoded download to \(data.path)")
            }
        }
        guard rename(data.path, file.path) == 0 else {
            throw TransportError(.fileError, message: "cannot move the download to \(file.path): \(String(cString: strerror(errno)))")
        }
        try? FileManager.default.removeItem(at: PartialDownload.sidecar(for: file))
    }
}
