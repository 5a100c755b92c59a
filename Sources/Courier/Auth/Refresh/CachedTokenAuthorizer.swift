/// An authorizer whose tokens come from one ``TokenCache``: it answers and drops rejected tokens
/// through the cache, so the single-flight refresh and its background renewal live in one place.
protocol CachedTokenAuthorizer: TokenAuthorizer {
    var cache: TokenCache { get }
}

extension CachedTokenAuthorizer {
    public func token(context: AuthorizationContext?) async throws -> AccessToken {
        try await cache.token(context: context)
    }

    public func invalidateToken(_ value: String?) async {
        cache.invalidate(rejected: value)
    }
}
