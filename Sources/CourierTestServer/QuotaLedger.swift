import CourierSync
import Foundation

/// The `quota-N` fault's books: at most N requests per one-second window per header value, the
/// rest answered 429 `RESOURCE_EXHAUSTED` as Google's quota errors are (no `Retry-After`).
/// Windows count from each header value's first request.
public final class QuotaLedger: Sendable {
    /// One window's requests.
    public struct Window: Sendable, Hashable {
        public var accepted = 0
        public var refused = 0
        public var total: Int { accepted + refused }
    }

    private struct Books {
        var start: ContinuousClock.Instant
        var windows: [Window] = []
    }

    private let books = LockedValue<[String: Books]>([:])

    /// Counts a request against `limit` per second; false when it is over the quota.
    func admit(_ key: String, limit: Int) -> Bool {
        let now = ContinuousClock.now
        return books.withLock { books in
            var entry = books[key] ?? Books(start: now)
            let elapsed = now - entry.start
            let index = Int(elapsed.components.seconds)
            while entry.windows.count <= index { entry.windows.append(Window()) }
            let accepted = entry.windows[index].accepted < limit
            if accepted { entry.windows[index].accepted += 1 } else { entry.windows[index].refused += 1 }
            books[key] = entry
            return accepted
        }
    }

    /// The windows seen for this exact header value, in order.
    public func windows(_ headerValue: String) -> [Window] {
        books.withLock { $0[headerValue]?.windows ?? [] }
    }
}
