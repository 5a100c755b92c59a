extension ServiceActor {
    /// The pages of a paged query, fetched one at a time as you iterate: any response with a
    /// `nextPageToken` (``APIPage``), also one whose items are not a single list.
    ///
    /// ```swift
    /// for try await page in service.pages(of: query) { print(page.items.count) }
    /// ```
    public nonisolated func pages<Response: APIPage>(of query: Query<Response>) -> QueryPages<Response> {
        QueryPages(service: self, query: query)
    }

    /// The items of every page of a collection query, fetched lazily.
    ///
    /// ```swift
    /// for try await note in service.items(of: query) where note.title?.isEmpty == false { … }
    /// ```
    public nonisolated func items<Response: APICollection>(of query: Query<Response>) -> QueryItems<Response> {
        QueryItems(pages: QueryPages(service: self, query: query))
    }

    /// Every page of the paged query `convertible` describes, fetched lazily.
    public nonisolated func pages<Convertible: QueryConvertible>(of convertible: Convertible) -> QueryPages<Convertible.Response>
    where Convertible.Response: APIPage {
        pages(of: convertible.makeQuery())
    }

    /// Every item of every page of the query `convertible` describes, fetched lazily.
    public nonisolated func items<Convertible: QueryConvertible>(of convertible: Convertible) -> QueryItems<Convertible.Response>
    where Convertible.Response: APICollection {
        items(of: convertible.makeQuery())
    }
}

/// Pages of a paged query as an `AsyncSequence`; each `next()` fetches one page.
public struct QueryPages<Response: APIPage>: AsyncSequence, Sendable {
    public typealias Element = Response
    let service: ServiceActor
    let query: Query<Response>

    public struct AsyncIterator: AsyncIteratorProtocol {
        let service: ServiceActor
        let query: Query<Response>
        var nextToken: String?
        var started = false
        var pageNumber = 0

        public mutating func next() async throws -> Response? {
            if started && (nextToken ?? "").isEmpty { return nil }
            var pageQuery = started ? query.nextPage(token: nextToken!) : query
            pageQuery.execution.paging = .single
            if started {
                pageQuery.requestID = RequestID.next()
                service.eventHub.emit(.nextPage(requestID: query.requestID, query: query.name, page: pageNumber + 1))
            }
            started = true
            let page = try await service.execute(pageQuery)
            pageNumber += 1
            nextToken = page.nextPageToken
            return page
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(service: service, query: query)
    }
}

/// The items of every page of a collection query as an `AsyncSequence`.
public struct QueryItems<Response: APICollection>: AsyncSequence, Sendable {
    public typealias Element = Response.Item
    let pages: QueryPages<Response>

    public struct AsyncIterator: AsyncIteratorProtocol {
        var pages: QueryPages<Response>.AsyncIterator
        /// The current page's items, converted one at a time as they are reached.
        var items: Response.Iterator?

        public mutating func next() async throws -> Response.Item? {
            while true {
                if let item = items?.next() { return item }
                guard let page = try await pages.next() else { return nil }
                items = page.makeIterator()
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: pages.makeAsyncIterator())
    }
}
