import CourierSync
import Foundation

/// The service's ETag cache and request coalescing for GET queries (``QueryCaching``).
final class QueryCache: Sendable {
    let options: QueryCaching
    private let cache: LockedValue<ResponseCache>
    private let coalescer = RequestCoalescer()
    private let metrics: PipelineMetrics

    init(_ options: QueryCaching, metrics: PipelineMetrics) {
        self.options = options
        cache = LockedValue(ResponseCache(maximumBytes: options.maximumBytes))
        self.metrics = metrics
    }

    /// Sends a GET (`perform` runs it through the pipeline; `conditional` when it carries
    /// `If-None-Match`, so a 304 is an answer) through the coalescer and the cache.
    func get(_ request: HTTPRequest, cached: Bool, coalesced: Bool,
             perform: @escaping @Sendable (HTTPRequest, _ conditional: Bool) async throws -> HTTPResponse) async throws
        -> HTTPResponse
    {
        // A request with its own precondition is the caller's to judge.
        let usesCache = cached && options.maximumBytes > 0 && !request.headers.contains("If-None-Match")
            && !request.headers.contains("If-Match")
        let key = Self.key(of: request)
        guard coalesced, options.coalescesRequests else {
            return try await revalidate(request, key: key, usesCache: usesCache, perform: perform)
        }
        let (response, shared) = try await coalescer.run(key) { [self] in
            try await revalidate(request, key: key, usesCache: usesCache, perform: perform)
        }
        if shared { metrics.coalesced() }
        return response
    }

    /// Drops the cached answers a write to `request`'s path makes stale.
    func invalidate(after request: HTTPRequest) {
        let path = Self.path(of: request.url)
        cache.withLock { _ = $0.removeAll(path: path) }
    }

    private func revalidate(_ request: HTTPRequest, key: String, usesCache: Bool,
                            perform: @Sendable (HTTPRequest, Bool) async throws -> HTTPResponse) async throws -> HTTPResponse
    {
        guard usesCache else { return try await perform(request, false) }
        let entry = cache.withLock { $0.entry(key) }
        var conditional = request
        if let entry { conditional.headers.replaceOrAdd(name: "If-None-Match", value: entry.etag) }
        let response = try await perform(conditional, entry != nil)
        if response.status == 304, let entry {
            metrics.cacheLookup(.hit)
            return entry.response
        }
        metrics.cacheLookup(entry == nil ? .miss : .modified)
        if response.isSuccess, let etag = Self.etag(of: response) {
            let stored = ResponseCache.Entry(etag: etag, response: response, path: Self.path(of: request.url))
            let bytes = cache.withLock { cache in
                cache.store(stored, for: key)
                return cache.bytes
            }
            metrics.cacheBytes(bytes)
        }
        return response
    }

    /// The URL and the headers: everything that can make two GETs differ before credentials,
    /// which are the service's own.
    static func key(of request: HTTPRequest) -> String {
        var key = request.url.absoluteString
        for field in request.headers.sorted(by: { ($0.name.lowercased(), $0.value) < ($1.name.lowercased(), $1.value) }) {
            key += "\n\(field.name.lowercased()):\(field.value)"
        }
        return key
    }

    static func path(of url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.fragment = nil
        return components?.string ?? url.absoluteString
    }

    /// The `ETag` header, or an API object's `etag` field (quoted, as `If-None-Match` wants it).
    static func etag(of response: HTTPResponse) -> String? {
        if let header = response.headers["ETag"], !header.isEmpty { return header }
        guard response.headers["Content-Type"]?.contains("json") == true,
              let object = try? JSONValue(parsing: response.body).objectValue,
              let etag = object["etag"]?.stringValue, !etag.isEmpty else { return nil }
        return etag.hasPrefix("\"") || etag.hasPrefix("W/\"") ? etag : "\"\(etag)\""
    }
}
