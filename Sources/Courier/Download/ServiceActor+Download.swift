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
    /// recovering from dropped connections with `Range`; the body never sits in memory. A 401
    /// makes the authorizer refresh its credentials once, as for queries.
    public nonisolated func downloadFile<Response>(_ query: Query<Response>, to file: URL,
                                                   options: DownloadOptions = DownloadOptions()) async throws -> DownloadResult {
        var media = query
        media.downloadsMedia = true
        let request = try RequestBuilder.build(media, configuration: configuration)
        return try await downloadFile(request, to: file, options: options, requestID: query.requestID, name: query.name)
    }

    /// Downloads `request`'s 2xx body to `file` (see ``downloadFile(_:to:options:)-(Query<Response>,_,_)``).
    public nonisolated func downloadFile(_ request: HTTPRequest, to file: URL,
                                         options: DownloadOptions = DownloadOptions()) async throws -> DownloadResult {
        try await downloadFile(request, to: file, options: options, requestID: RequestID.next(), name: "download")
    }

    private nonisolated func downloadFile(_ base: HTTPRequest, to file: URL, options: DownloadOptions, requestID: String,
                                          name: String) async throws -> DownloadResult {
        let sidecar = PartialDownload.sidecar(for: file)
        var retry = RetryStateMachine(policy: configuration.retry, queryName: name, replayable: true)
        var firstOffset: Int64?
        var refreshedCredentials = false
        while true {
            try Task.checkCancellation()
            var request = base
            let partial = options.resume ? Self.readPartial(sidecar, file: file, url: base.url) : nil
            let offset = partial.map { _ in Self.fileSize(file) } ?? 0
            if offset > 0, let validator = partial?.etag ?? partial?.lastModified {
                request.headers["Range"] = "bytes=\(offset)-"
                request.headers["If-Range"] = validator
            }
            if let authorizer = configuration.authorizer { try await authorizer.authorize(&request) }
            do {
                let result = try await downloadAttempt(request, file: file, offset: request.headers["Range"] == nil ? 0 : offset,
                                                       partial: partial, options: options)
                if options.verifyIntegrity, let header = result.head.headers["x-goog-hash"] {
                    try Self.verify(file: file, against: header)
                }
                try? FileManager.default.removeItem(at: sidecar)
                return DownloadResult(file: file, bytes: Self.fileSize(file), resumedFrom: firstOffset ?? result.startedAt,
                                      head: result.head)
            } catch let error as TransportError {
                firstOffset = firstOffset ?? offset
                guard options.resume, case .retry(let delay) = retry.decide(.transportFailure(error)) else { throw error }
                eventHub.emit(.retrying(requestID: requestID, query: name, attempt: retry.retries, delay: delay, reason: "\(error)"))
                try await configuration.clock.sleep(for: delay)
            } catch let error as APIError {
                if error.status == 401, let authorizer = configuration.authorizer, !refreshedCredentials {
                    refreshedCredentials = true // an expired token: refresh once, as queries do
                    await authorizer.invalidate(request)
                    continue
                }
                guard case .retry(let delay) = retry.decide(.response(status: error.status, retryAfter: RetryAfter.parse(error.headers["Retry-After"])))
                else { throw error }
                try await configuration.clock.sleep(for: delay)
            }
        }
    }

    /// One request: streams the body into the file, appending after a 206.
    private nonisolated func downloadAttempt(_ request: HTTPRequest, file: URL, offset: Int64, partial: PartialDownload?,
                                             options: DownloadOptions) async throws -> (head: HTTPResponseHead, startedAt: Int64) {
        let response = try await stream(request)
        let head = response.head
        var start: Int64
        switch head.status {
        case 206 where offset > 0 && head.headers["Content-Range"]?.hasPrefix("bytes \(offset)-") == true:
            start = offset
        case 416 where offset > 0 && partial?.totalBytes == offset:
            return (head, offset) // the file was already complete
        case 200..<300 where head.status != 206:
            start = 0 // a fresh download, or the object changed and If-Range sent it whole
        default:
            let body = (try? await response.body.collect(upTo: 1 << 20)) ?? Data()
            throw APIError(response: HTTPResponse(head: head, body: body))
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
        return (head, start)
    }

    private static func readPartial(_ sidecar: URL, file: URL, url: URL) -> PartialDownload? {
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
