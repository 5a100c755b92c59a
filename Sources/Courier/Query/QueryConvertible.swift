/// Anything that builds a ``Query``: generated method structs (`Storage.Objects.ListQuery`) keep
/// their parameters as typed properties and become a query when executed.
///
/// ```swift
/// var list = Storage.Objects.list(bucket: "photos")
/// list.maxResults = 100
/// let page = try await service.execute(list)
/// for try await object in service.items(of: list) { … }
/// ```
public protocol QueryConvertible: Sendable {
    associatedtype Response: QueryResponse
    /// The query this describes; each call makes a fresh one (with a new request ID).
    func makeQuery() -> Query<Response>
}

extension Query: QueryConvertible {
    public func makeQuery() -> Query<Response> { self }
}
