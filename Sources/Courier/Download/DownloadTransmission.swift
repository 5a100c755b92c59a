import Foundation

/// One download attempt: the head, where in the data it started, for a refused status its
/// body, and the record to start a sliced download from when the answer showed an object worth slicing.
struct DownloadAttempt: Sendable {
    let head: HTTPResponseHead
    let startedAt: Int64
    var errorBody: Data?
    var slice: PartialDownload?
}

/// A transmission whose response body goes to disk as it arrives (a whole download, or one
/// slice): the network and a mock's answer both stream through ``write(_:of:)``.
protocol DiskTransmission: Transmission where Output == DownloadAttempt {
    func write(_ response: HTTPStreamingResponse, of request: HTTPRequest) async throws -> DownloadAttempt
}

extension DiskTransmission {
    nonisolated(nonsending) func send(_ request: HTTPRequest, through service: ServiceActor, tally: AttemptTally) async throws
        -> DownloadAttempt
    {
        try await write(service.transmitStreaming(request, resends: tally), of: request)
    }

    nonisolated(nonsending) func mock(_ request: HTTPRequest, answer: HTTPResponse) async throws -> DownloadAttempt {
        try await write(HTTPStreamingResponse(head: answer.head, body: HTTPResponseBody(buffered: answer.body)), of: request)
    }

    func head(of output: DownloadAttempt) -> HTTPResponseHead { output.head }
    func body(of output: DownloadAttempt) -> Data? { output.errorBody }

    nonisolated(nonsending) func settle(_ output: DownloadAttempt) async throws -> (HTTPResponse, DownloadAttempt) {
        (HTTPResponse(head: output.head, body: output.errorBody ?? Data()), output)
    }
}

/// A streamed response written into the partial data file: appended after a matching 206, from
/// the start after a 200. A failure mid-body is thrown from the attempt, so the pipeline's retry
/// resumes from what reached the disk.
struct DownloadTransmission: DiskTransmission {
    let file: URL
    let options: DownloadOptions
    /// The download's URL as asked, before any generation is pinned: what the record is kept under.
    let url: URL

    func bytesKept() -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: PartialDownload.dataFile(for: file).path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// The object's size as the server gave it: `Content-Range`'s total, else where this part
    /// starts plus its `Content-Length`. nil when it gave none, or a negative one, or one past
    /// `Int64` (a hostile or broken server: a size is never trusted to be sane).
    static func totalBytes(_ headers: HTTPHeaders, start: Int64) -> Int64? {
        if let total = headers["Content-Range"]?.split(separator: "/").last.flatMap({ Int64($0) }) {
            return total >= 0 ? total : nil
        }
        guard let length = headers["Content-Length"].flatMap({ Int64($0) }), length >= 0 else { return nil }
        let (sum, overflow) = start.addingReportingOverflow(length)
        return overflow ? nil : sum
    }

    func write(_ response: HTTPStreamingResponse, of request: HTTPRequest) async throws -> DownloadAttempt {
        let head = response.head
        let offset = request.headers["Range"].flatMap { Int64($0.dropFirst("bytes=".count).dropLast()) } ?? 0
        let partial = offset > 0 ? PartialDownload.read(for: file, url: url) : nil
        var start: Int64
        switch head.status {
        case 206 where offset > 0 && head.headers["Content-Range"]?.hasPrefix("bytes \(offset)-") == true:
            guard head.headers["Content-Encoding"]?.lowercased() == partial?.contentEncoding else {
                // The rest came in another encoding: the bytes on disk and these cannot be joined.
                PartialDownload.remove(for: file)
                throw TransportError(.protocolError, message: "the resumed download came with Content-Encoding \(head.headers["Content-Encoding"] ?? "none"), the first part with \(partial?.contentEncoding ?? "none"); the partial data was discarded")
            }
            start = offset
        case 416 where offset > 0 && partial?.totalBytes == offset:
            return DownloadAttempt(head: head, startedAt: offset) // the data was already complete
        case 200..<300 where head.status != 206:
            start = 0 // a fresh download, or the object changed and If-Range sent it whole
        case 404 where request.url != url:
            throw PartialDownload.objectChanged(file, generation: partial?.generation, status: 404)
        default:
            let body = (try? await response.body.collect(upTo: 1 << 20)) ?? Data()
            if head.status == 416 || head.status == 206 { throw APIError(response: HTTPResponse(head: head, body: body)) }
            return DownloadAttempt(head: head, startedAt: 0, errorBody: body)
        }
        let total = Self.totalBytes(head.headers, start: start)
        let record = PartialDownload(url: url.absoluteString, etag: head.headers["ETag"],
                                     lastModified: head.headers["Last-Modified"], totalBytes: total,
                                     googHash: head.headers["x-goog-hash"],
                                     contentEncoding: head.headers["Content-Encoding"]?.lowercased(),
                                     generation: start > 0 ? partial?.generation : head.headers["x-goog-generation"])
        if start == 0, let total, let etag = record.etag, head.headers["Accept-Ranges"]?.lowercased() == "bytes",
           let ranges = options.slicing?.ranges(total: total) {
            // Worth slicing: drop this body (the transfer is cancelled) and start the slices.
            var sliced = record
            sliced.etag = etag
            sliced.slices = ranges.map { PartialDownload.Slice(start: $0.lowerBound, end: $0.upperBound, written: 0) }
            return DownloadAttempt(head: head, startedAt: 0, slice: sliced)
        }
        try record.write(for: file)

        let data = PartialDownload.dataFile(for: file)
        if start == 0 { _ = FileManager.default.createFile(atPath: data.path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: data.path) else {
            throw TransportError(.fileError, message: "cannot write \(data.path)")
        }
        var closed = false
        defer { if !closed { try? handle.close() } }
        try handle.truncate(atOffset: UInt64(start))
        try handle.seek(toOffset: UInt64(start))
        var written = start
        for try await chunk in response.body {
            try handle.write(contentsOf: chunk)
            written += Int64(chunk.count)
            options.progress?(DownloadProgress(bytesWritten: written, totalBytes: total))
        }
        closed = true
        try PartialDownload.close(handle, data)
        return DownloadAttempt(head: head, startedAt: start)
    }
}
