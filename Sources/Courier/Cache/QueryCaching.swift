/// An ETag cache and request coalescing for the GET queries of a service
/// (``ServiceActor/Configuration/Queries-swift.struct/caching``).
///
/// - **ETag cache**: a GET whose answer carries an ETag (the header, or an API object's `etag`)
///   keeps the answer; the next identical GET sends `If-None-Match`, and a `304 Not Modified` is
///   answered from the cache, as the object it was. The cache holds at most `maximumBytes` of
///   bodies and drops the least recently used first. A write through a query (POST, PUT, PATCH,
///   DELETE) drops every cached answer for its path.
/// - **Coalescing**: identical GETs in flight at the same time share one request (single
///   flight); each caller decodes its own copy of the answer. A caller that is cancelled leaves
///   the others waiting; the request is cancelled only when every caller has left.
///
/// "Identical" means the same URL (with its `fields`, its parameters and API key), the same
/// headers, and the same service, whose one authorizer is the identity. A query opts out with
/// ``ExecutionParameters/cached`` and ``ExecutionParameters/coalesced``.
///
/// ```swift
/// configuration.queries.caching = QueryCaching(maximumBytes: 32 << 20)
/// ```
public struct QueryCaching: Sendable, Hashable {
    /// Bytes of bodies kept at most; 0 keeps none (coalescing only).
    public var maximumBytes: Int
    /// Whether identical GETs in flight at once share one request.
    public var coalescesRequests: Bool

    public init(maximumBytes: Int = 16 << 20, coalescesRequests: Bool = true) {
        self.maximumBytes = max(0, maximumBytes)
        self.coalescesRequests = coalescesRequests
    }
}
