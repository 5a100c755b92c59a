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
            case file(URL)
            case stream(length: Int64?, pump: Pump)
        }

        let storage: Storage

        /// No body.
        public static let empty = Body(storage: .empty)

        /// Bytes already in memory.
        public static func data(_ data: Data) -> Body { Body(storage: .data(data)) }

        /// A file read from disk as it is sent, so memory stays flat whatever its size.
        public static func file(_ url: URL) -> Body { Body(storage: .file(url)) }

        /// An async sequence of chunks, read only as fast as the connection drains them.
        ///
        /// - Parameter length: The total byte count if known (sent as `Content-Length`);
        ///   `nil` sends the body with chunked transfer encoding.
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
            case .file(let url): (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
            case .stream(let length, _): length
            }
        }

        var isEmpty: Bool {
            if case .empty = storage { return true }
            return false
        }
    }
}
