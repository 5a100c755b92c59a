import Foundation
import OrderedCollections

/// Answers by request key with their ETags, least recently used first, at most `maximumBytes`
/// of bodies. A value; ``QueryCache`` keeps it under a lock.
struct ResponseCache: Sendable {
    struct Entry: Sendable {
        let etag: String
        let response: HTTPResponse
        /// The URL without its query, for dropping the entries a write makes stale.
        let path: String
        var bytes: Int { response.body.count }
    }

    let maximumBytes: Int
    private var entries = OrderedDictionary<String, Entry>()
    private(set) var bytes = 0

    init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    var count: Int { entries.count }

    /// The entry for `key`, which becomes the most recently used.
    mutating func entry(_ key: String) -> Entry? {
        guard let index = entries.index(forKey: key) else { return nil }
        let entry = entries.remove(at: index).value
        entries[key] = entry
        return entry
    }

    /// Keeps `entry` under `key`, dropping the least recently used until the bodies fit. An
    /// entry larger than the whole cache is not kept.
    mutating func store(_ entry: Entry, for key: String) {
        remove(key)
        guard entry.bytes <= maximumBytes else { return }
        entries[key] = entry
        bytes += entry.bytes
        while bytes > maximumBytes, let oldest = entries.keys.first {
            remove(oldest)
        }
    }

    mutating func remove(_ key: String) {
        if let removed = entries.removeValue(forKey: key) { bytes -= removed.bytes }
    }

    /// Drops every entry for `path`; returns how many.
    @discardableResult
    mutating func removeAll(path: String) -> Int {
        let stale = entries.filter { $0.value.path == path }.map(\.key)
        for key in stale { remove(key) }
        return stale.count
    }
}
