import Foundation

extension HTTPRequest {
    /// A request body: nothing, bytes in memory, a file streamed from disk, or an async
    /// sequence of chunks streamed with backpressure.
    public struct Body: Sendable {
        /// Pulls every chunk of a streamed body into `sink`, which suspends while the transfer's
        /// buffer is full: that suspension is the backpressure.
        typealias Pump = @Sendable (_ sink: (Data) async throws -> Void) async throws -> Void

        enum Storage: Sendable {
            case empty
            case data(Data)
            case file(URL, range: Range<Int64>?)
            case stream(length: Int64?, pump: Pump)
            case parts([Part])
        }

        /// A piece of a body made of several: bytes in memory or a range of a file.
        public enum Part: Sendable {
            case data(Data)
            case file(URL, range: Range<Int64>?)
        }

        /// Several pieces sent one after the other, each read when its turn comes: a
        /// `multipart/related` upload streams its file between two small headers this way, and
        /// can still be sent again.
        public static func parts(_ parts: [Part]) -> Body { Body(storage: .parts(parts)) }

        let storage: Storage

        /// No body.
        public static let empty = Body(storage: .empty)

        /// Bytes already in memory.
        public static func data(_ data: Data) -> Body { Body(storage: .data(data)) }

        /// A file read from disk as it is sent, so memory stays flat whatever its size.
        public static func file(_ url: URL) -> Body { Body(storage: .file(url, range: nil)) }

        /// Bytes `range` of a file, read from disk as they are sent: one chunk of an upload.
        public static func file(_ url: URL, range: Range<Int64>) -> Body { Body(storage: .file(url, range: range)) }

        /// An async sequence of chunks, read only as fast as the connection drains them.
        ///
        /// - Parameters:
        ///   - chunks: The body's bytes, in order.
        ///   - length: The total byte count if known (sent as `Content-Length`);
        ///     `nil` sends the body with chunked transfer encoding.
        public static func stream<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int64? = nil) -> Body
        where Chunks.Element == Data {
            Body(storage: .stream(length: length) { sink in
                for try await chunk in chunks where !chunk.isEmpty { try await sink(chunk) }
            })
        }

        /// Whether the body can be sent again, as a retry or a redirect needs.
        public var isReplayable: Bool {
            if case .stream = storage { return false }
            return true
        }

        /// The byte count if it is known without reading the body.
        public var knownLength: Int64? {
            switch storage {
            case .empty: 0
            case .data(let data): Int64(data.count)
            case .file(_, let range?): Self.length(of: range)
            case .file(let url, nil): (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
            case .stream(let length, _): length.flatMap { $0 >= 0 ? $0 : nil }
            case .parts(let parts):
                parts.reduce(Int64(0) as Int64?) { total, part in
                    let length: Int64? = switch part {
                    case .data(let data): Int64(data.count)
                    case .file(_, let range?): Self.length(of: range)
                    case .file(let url, nil): Body.file(url).knownLength
                    }
                    guard let total, let length else { return nil }
                    let (sum, overflow) = total.addingReportingOverflow(length)
                    return overflow ? nil : sum
                }
            }
        }

        /// A file range's byte count; nil for one no file holds (it starts before 0), which the
        /// transfer refuses when it opens the file. `range.count` would trap on such a range's
        /// distance past Int64 (`-1..<Int64.max`).
        static func length(of range: Range<Int64>) -> Int64? {
            range.lowerBound >= 0 ? range.upperBound - range.lowerBound : nil
        }

        var isEmpty: Bool {
            if case .empty = storage { return true }
            return false
        }
    }
}

extension HTTPRequest.Body {
    /// A stream that declares zero bytes: curl reads nothing of a body of length 0, so such a
    /// stream is read to its end before the request goes (``HTTPRequest/drainingEmptyStream()``).
    var isEmptyStream: Bool {
        if case .stream(0?, _) = storage { return true }
        return false
    }
}

extension HTTPRequest {
    /// The request with its zero-length stream read and found empty, or a typed error when the
    /// stream yields a byte: the length it declared would cut it (see ``TransportError/bodyLengthMismatch``).
    func drainingEmptyStream() async throws -> HTTPRequest {
        guard case .stream(_, let pump) = body.storage else { return self }
        try await pump { _ in
            throw TransportError(.bodyLengthMismatch, message: "the request body stream yielded more than its declared 0 bytes")
        }
        var drained = self
        drained.body = .data(Data())
        return drained
    }
}

