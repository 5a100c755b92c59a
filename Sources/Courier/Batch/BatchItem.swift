import Foundation

/// One query of a batch with its response type erased: everything a batch needs to execute it,
/// put it on the wire, decode its part and follow its pages.
struct BatchItem: Sendable {
    let requestID: String
    let name: String
    let api: APIDescription
    let paging: PagingPolicy?
    let retry: RetryPolicy?
    let isMedia: Bool
    let execute: @Sendable (ServiceActor) async throws -> any Sendable
    let makeRequest: @Sendable (ServiceActor.Configuration) throws -> HTTPRequest
    let decode: @Sendable (HTTPResponse, JSONLimits) throws -> any Sendable
    let complete: (@Sendable (Result<any Sendable, any Error>) async -> Void)?
    /// For collections: the query of the page after `result`, if there is one.
    let nextPage: @Sendable (_ result: any Sendable) -> BatchItem?
    /// For collections: `result` with `page`'s items appended and its token.
    let merge: @Sendable (_ result: any Sendable, _ page: any Sendable) -> any Sendable

    init<Response>(_ query: Query<Response>, completion: (@Sendable (Result<Response, any Error>) async -> Void)?) {
        requestID = query.requestID
        name = query.name
        api = query.api
        paging = query.execution.paging
        retry = query.execution.retry
        isMedia = query.downloadsMedia || query.isUpload
        execute = { service in try await service.execute(query) }
        makeRequest = { configuration in try RequestBuilder.build(query, configuration: configuration) }
        decode = { [api = query.api] response, limits in try Response.decode(from: api.unwrapped(response), limits: limits) }
        if let completion {
            complete = { (result: Result<any Sendable, any Error>) async in
                let typed: Result<Response, any Error>
                switch result {
                case .success(let value as Response): typed = .success(value)
                case .success: typed = .failure(QueryError(code: .unexpectedResponse, message: "a batch result has another type"))
                case .failure(let error): typed = .failure(error)
                }
                await completion(typed)
            }
        } else {
            complete = nil
        }
        nextPage = { result in
            guard let collection = result as? any APICollection, let token = collection.nextPageToken, !token.isEmpty else {
                return nil
            }
            var page = query.nextPage(token: token)
            page.requestID = RequestID.next()
            page.execution.paging = .single
            return BatchItem(page, completion: nil)
        }
        merge = { result, page in
            guard let collection = result as? any APICollection else { return result }
            return Self.appendPage(page, to: collection)
        }
    }

    private static func appendPage<Collection: APICollection>(_ page: any Sendable, to collection: Collection) -> any Sendable {
        guard let page = page as? Collection else { return collection }
        return collection.appending(page)
    }
}
