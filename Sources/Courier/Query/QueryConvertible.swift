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

extension ServiceActor {
    /// Executes the query `convertible` describes.
    public nonisolated func execute<Convertible: QueryConvertible>(_ convertible: Convertible) async throws -> Convertible.Response {
        try await execute(convertible.makeQuery())
    }

    /// Every page of a paged query, fetched lazily.
    public nonisolated func pages<Convertible: QueryConvertible>(of convertible: Convertible) -> QueryPages<Convertible.Response>
    where Convertible.Response: APIPage {
        pages(of: convertible.makeQuery())
    }

    /// Every item of every page, fetched lazily.
    public nonisolated func items<Convertible: QueryConvertible>(of convertible: Convertible) -> QueryItems<Convertible.Response>
    where Convertible.Response: APICollection {
        items(of: convertible.makeQuery())
    }

    /// Starts the upload a query with ``Query/upload`` describes.
    public nonisolated func upload<Convertible: QueryConvertible>(_ convertible: Convertible) -> UploadTask<Convertible.Response> {
        upload(convertible.makeQuery())
    }
}
