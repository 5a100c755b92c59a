import CourierSync
import Foundation

/// How `ServiceActor.downloadFile(_:to:options:)` behaves.
public struct DownloadOptions: Sendable {
    /// Continue a partial file with `Range: bytes=N-`, validated by `If-Range` with its ETag;
    /// also how a download recovers from a dropped connection.
    public var resume = true
    /// Compare the file with the server's `x-goog-hash` (MD5 and CRC32C) when it sends one.
    public var verifyIntegrity = true
    /// Called as bytes arrive (from the downloading task).
    public var progress: (@Sendable (DownloadProgress) -> Void)?

    public init(resume: Bool = true, verifyIntegrity: Bool = true, progress: (@Sendable (DownloadProgress) -> Void)? = nil) {
        self.resume = resume
        self.verifyIntegrity = verifyIntegrity
        self.progress = progress
    }
}

/// Bytes on disk so far, and the size when the server said.
public struct DownloadProgress: Sendable, Hashable {
    public var bytesWritten: Int64
    public var totalBytes: Int64?
}

/// A finished download.
public struct DownloadResult: Sendable {
    public let file: URL
    public let bytes: Int64
    /// Where this run started in the file: 0 for a fresh download.
    public let resumedFrom: Int64
    public let head: HTTPResponseHead
}

/// What a partial download remembers next to its file, for `If-Range`.
struct PartialDownload: Codable {
    var url: String
    var etag: String?
    var lastModified: String?
    var totalBytes: Int64?

    static func sidecar(for file: URL) -> URL { file.appendingPathExtension("courier-partial") }
}

extension ServiceActor {
    /// Downloads the media of `query` (`alt=media`) to `file`, resuming a partial file and
    /// recovering from dropped connections with `Range`; the body never sits in memory. The
    /// requests take the one pipeline: credentials (refreshed once after a 401), limits, the
    /// test handler, retries by the service's policy, logs, events, metrics and
    /// ``cancel(requestID:)`` with the query's request ID.
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

    /// Every attempt asks the file where to continue (`Range` and `If-Range` from the partial
    /// file's sidecar), so the pipeline's retries resume instead of starting over.
    private nonisolated func downloadFile(_ base: HTTPRequest, to file: URL, options: DownloadOptions,
                                          context: RequestContext) async throws -> DownloadResult {
        var accepting = context
        accepting.accepts = { (200..<300).contains($0) || $0 == 416 } // 416: the partial file was already whole
        let sidecar = PartialDownload.sidecar(for: file)
        let offsets = LockedValue<[Int64]>([]) // where each attempt asked to start
        let transmission = DownloadTransmission(file: file, options: options)
        let attempt = try await pipeline(accepting).run(transmission) {
            var request = base
            let partial = options.resume ? Self.readPartial(sidecar, file: file, url: base.url) : nil
            let offset = partial.map { _ in Self.fileSize(file) } ?? 0
            offsets.withLock { $0.append(offset) }
            if offset > 0, let validator = partial?.etag ?? partial?.lastModified {
                request.headers["Range"] = "bytes=\(offset)-"
                request.headers["If-Range"] = validator
            }
            return request
        }
        if options.verifyIntegrity, let header = attempt.head.headers["x-goog-hash"] {
            try Self.verify(file: file, against: header)
        }
        try? FileManager.default.removeItem(at: sidecar)
        // After failed attempts, where the first one began; else where the answer let it begin
        // (0 when the object changed and came whole).
        let asked = offsets.withLock { $0 }
        return DownloadResult(file: file, bytes: Self.fileSize(file), resumedFrom: asked.count > 1 ? asked[0] : attempt.startedAt,
                              head: attempt.head)
    }

    static func readPartial(_ sidecar: URL, file: URL, url: URL) -> PartialDownload? {
        guard FileManager.default.fileExists(atPath: file.path), let data = try? Data(contentsOf: sidecar),
              let partial = try? JSONDecoder().decode(PartialDownload.self, from: data), partial.url == url.absoluteString
        else { return nil }
        return partial
    }

    static func fileSize(_ file: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? NSNumber)?.int64Value ?? 0
    }

    /// `x-goog-hash: crc32c=…, md5=…` against the file's bytes.
    static func verify(file: URL, against header: String) throws {
        let accumulator = ChecksumAccumulator()
        try ChecksumAccumulator.file(file, range: 0..<fileSize(file), into: accumulator)
        let local = accumulator.finish()
        for entry in header.split(separator: ",") {
            let pair = entry.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            let expected: String? = switch pair[0] {
            case "md5": local.md5Base64
            case "crc32c": local.crc32cBase64
            default: nil
            }
            if let expected, expected != pair[1] {
                throw IntegrityError(message: "\(pair[0]): server \(pair[1]), downloaded file \(expected)")
            }
        }
    }
}

/// One download attempt: the head, where in the file it started, and for a refused status its body.
struct DownloadAttempt: Sendable {
    let head: HTTPResponseHead
    let startedAt: Int64
    var errorBody: Data?
}

/// A streamed response written into `file`: appended after a matching 206, from the start after
/// a 200. A failure mid-body is thrown from the attempt, so the pipeline's retry resumes from
/// what reached the disk.
struct DownloadTransmission: Transmission {
    let file: URL
    let options: DownloadOptions

    nonisolated(nonsending) func send(_ request: HTTPRequest, through service: ServiceActor) async throws -> DownloadAttempt {
        try await ServiceActor.write(service.transmitStreaming(request), of: request, to: file, options: options)
    }

    nonisolated(nonsending) func mock(_ request: HTTPRequest, answer: HTTPResponse) async throws -> DownloadAttempt {
        try await ServiceActor.write(HTTPStreamingResponse(head: answer.head, body: HTTPResponseBody(buffered: answer.body)),
                                     of: request, to: file, options: options)
    }

    func head(of output: DownloadAttempt) -> HTTPResponseHead { output.head }
    func body(of output: DownloadAttempt) -> Data? { output.errorBody }

    nonisolated(nonsending) func settle(_ output: DownloadAttempt) async throws -> (HTTPResponse, DownloadAttempt) {
        (HTTPResponse(head: output.head, body: output.errorBody ?? Data()), output)
    }
}

extension ServiceActor {
    static func write(_ response: HTTPStreamingResponse, of request: HTTPRequest, to file: URL,
                      options: DownloadOptions) async throws -> DownloadAttempt {
        let head = response.head
        let offset = request.headers["Range"].flatMap { Int64($0.dropFirst("bytes=".count).dropLast()) } ?? 0
        let partial = offset > 0 ? readPartial(PartialDownload.sidecar(for: file), file: file, url: request.url) : nil
        var start: Int64
        switch head.status {
        case 206 where offset > 0 && head.headers["Content-Range"]?.hasPrefix("bytes \(offset)-") == true:
            start = offset
        case 416 where offset > 0 && partial?.totalBytes == offset:
            return DownloadAttempt(head: head, startedAt: offset) // the file was already complete
        case 200..<300 where head.status != 206:
            start = 0 // a fresh download, or the object changed and If-Range sent it whole
        default:
            let body = (try? await response.body.collect(upTo: 1 << 20)) ?? Data()
            if head.status == 416 || head.status == 206 { throw APIError(response: HTTPResponse(head: head, body: body)) }
            return DownloadAttempt(head: head, startedAt: 0, errorBody: body)
        }
        let total: Int64? = head.headers["Content-Range"].flatMap { $0.split(separator: "/").last.flatMap { Int64($0) } }
            ?? head.headers["Content-Length"].flatMap { Int64($0) }.map { start + $0 }
        let marker = PartialDownload(url: request.url.absoluteString, etag: head.headers["ETag"],
                                     lastModified: head.headers["Last-Modified"], totalBytes: total)
        try JSONEncoder().encode(marker).write(to: PartialDownload.sidecar(for: file))

        if start == 0 { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: file.path) else {
            throw TransportError(.fileError, message: "cannot write \(file.path)")
        }
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(start))
        try handle.seek(toOffset: UInt64(start))
        var written = start
        for try await chunk in response.body {
            try handle.write(contentsOf: chunk)
            written += Int64(chunk.count)
            options.progress?(DownloadProgress(bytesWritten: written, totalBytes: total))
        }
        return DownloadAttempt(head: head, startedAt: start)
    }
}
