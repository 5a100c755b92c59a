import Foundation

extension Query {
    /// The query with its deduplication parameter set to a new UUID when the query leaves it
    /// unset or empty (a GET or HEAD keeps its URL: it is safe to repeat anyway, and the cache
    /// keys by URL); nil when there is nothing to set.
    var deduplicated: Query? {
        guard let name = deduplicationParameter, method != .get, method != .head, parameters[name]?.isEmpty ?? true else {
            return nil
        }
        var query = self
        // Lowercase, as AIP-155's clients send it; never the nil UUID some APIs refuse.
        query.parameters[name] = UUID().uuidString.lowercased()
        return query
    }
}
