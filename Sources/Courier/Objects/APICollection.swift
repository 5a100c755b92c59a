/// A page of results: an object with an array of items and, when more exist, a `nextPageToken`.
///
/// The page is itself a `RandomAccessCollection` of its items: `list[3]`, `list.count` and
/// `for note in list` convert one item at a time from the JSON, with no array built in between.
///
/// ```swift
/// struct NoteList: APICollection {
///     typealias Item = Note
///     var json: JSONObject
///     var userProperties = UserProperties()
///     init(json: JSONObject = [:]) { self.json = json }
/// }
/// for note in list { print(note.title ?? "") }
/// ```
///
/// A response whose items the type cannot represent (a `null` where an object belongs) fails to
/// decode with ``QueryError/unexpectedResponse``, so every index holds an item.
public protocol APICollection: APIPage, RandomAccessCollection
where Element == Item, Index == Int {
    associatedtype Item: JSONConvertible
    /// The key of the items: "items" unless the API names it otherwise ("files", "tasks"…).
    static var itemsKey: String { get }
    /// Set for an aggregated list (Compute's `*AggregatedList`): ``itemsKey`` then holds a map
    /// of scopes (`"zones/us-east1-b"`), each an object with its items under this key
    /// (`"instances"`). ``items`` flattens them in scope order; nil for a plain array.
    static var itemsListKey: String? { get }
}

/// A page of a paged list: an object whose `nextPageToken`, when present, fetches the next one.
///
/// Every response of a method that takes `pageToken` and answers `nextPageToken` is one, so
/// ``ServiceActor/pages(of:)->QueryPages<Response>`` walks it even when its items cannot be told apart (two arrays,
/// neither the list's own); ``APICollection`` adds the items.
public protocol APIPage: APIObject {}

extension APIPage {
    /// The token that fetches the next page; nil on the last page.
    public var nextPageToken: String? {
        get { self["nextPageToken"] }
        set { self["nextPageToken"] = newValue }
    }
}

extension APICollection {
    public static var itemsKey: String { "items" }
    public static var itemsListKey: String? { nil }

    /// The items of this page (of every page, after ``PagingPolicy/fetchAll(maxPages:whenLimitReached:)``).
    ///
    /// For an aggregated list, every scope's items in scope order; setting them replaces the
    /// scopes with one unnamed scope holding them all.
    @inlinable public var items: [Item] {
        get {
            guard Self.itemsListKey != nil else { return self[Self.itemsKey] ?? [] }
            return itemsJSONValues.compactMap(Item.init(jsonValue:))
        }
        set {
            if let listKey = Self.itemsListKey {
                json[Self.itemsKey] = .object(["": .object([listKey: .array(newValue.map(\.jsonValue))])])
            } else {
                self[Self.itemsKey] = newValue
            }
        }
    }

    /// The raw JSON of the items, flattened across scopes for an aggregated list.
    @usableFromInline var itemsJSONValues: [JSONValue] {
        itemLists.flatMap { $0 }
    }

    /// This page with `page`'s items after its own and `page`'s `nextPageToken`: how
    /// `fetchAll` and batches build one collection from many pages. An aggregated list's scopes
    /// are merged scope by scope.
    public func appending(_ page: Self) -> Self {
        var merged = self
        if let listKey = Self.itemsListKey {
            var scopes = json[Self.itemsKey]?.objectValue ?? [:]
            for (scope, value) in page.json[Self.itemsKey]?.objectValue ?? [:] {
                let added = value.objectValue?[listKey]?.arrayValue ?? []
                var entry = scopes[scope]?.objectValue ?? value.objectValue ?? [:]
                if scopes[scope] != nil { entry[listKey] = .array((entry[listKey]?.arrayValue ?? []) + added) }
                scopes[scope] = .object(entry)
            }
            merged.json[Self.itemsKey] = .object(scopes)
        } else {
            merged.json[Self.itemsKey] = .array((json[Self.itemsKey]?.arrayValue ?? []) + (page.json[Self.itemsKey]?.arrayValue ?? []))
        }
        merged.nextPageToken = page.nextPageToken
        return merged
    }

    /// The raw JSON of each item, for kind resolution of mixed collections.
    public var itemsJSON: [JSONObject] {
        itemsJSONValues.compactMap(\.objectValue)
    }

    // MARK: RandomAccessCollection

    public var startIndex: Int { 0 }

    /// The number of items: O(1) for an array, O(scopes) for an aggregated list.
    public var endIndex: Int {
        guard let listKey = Self.itemsListKey else { return json[Self.itemsKey]?.arrayValue?.count ?? 0 }
        return (json[Self.itemsKey]?.objectValue ?? [:]).reduce(0) { $0 + ($1.value.objectValue?[listKey]?.arrayValue?.count ?? 0) }
    }

    /// Item `position` of this page (GTLR collections subscript too): O(1) for an array, O(scopes)
    /// for an aggregated list.
    public subscript(position: Int) -> Item {
        var offset = position
        if Self.itemsListKey != nil {
            for scope in itemLists {
                if offset < scope.count { return Self.item(scope[offset], at: position) }
                offset -= scope.count
            }
            preconditionFailure("index \(position) is out of range of \(endIndex) items")
        }
        return Self.item(json[Self.itemsKey]?.arrayValue?[offset] ?? .null, at: position)
    }

    public func makeIterator() -> APICollectionIterator<Self> {
        APICollectionIterator(lists: itemLists)
    }

    /// The raw item arrays: the one array, or an aggregated list's, one per scope in scope order.
    var itemLists: [[JSONValue]] {
        guard let listKey = Self.itemsListKey else { return [json[Self.itemsKey]?.arrayValue ?? []] }
        guard let scopes = json[Self.itemsKey]?.objectValue else { return [] }
        return scopes.keys.sorted().map { scopes[$0]?.objectValue?[listKey]?.arrayValue ?? [] }
    }

    static func item(_ value: JSONValue, at position: Int) -> Item {
        guard let item = Item(jsonValue: value) else {
            // Decoding a response checks every item (`validateItems`): only hand-made JSON gets here.
            preconditionFailure("item \(position) of \(Self.self) is \(value.kindName), not \(Item.self)")
        }
        return item
    }

    /// Throws ``QueryError/unexpectedResponse`` for an item the type cannot represent.
    func validateItems() throws(QueryError) {
        var position = 0
        for list in itemLists {
            for value in list {
                if Item(jsonValue: value) == nil {
                    throw QueryError(code: .unexpectedResponse,
                                     message: "item \(position) of \(Self.self) is \(value.kindName), not \(Item.self)")
                }
                position += 1
            }
        }
    }
}

extension QueryResponse where Self: APICollection {
    /// Decodes the page and checks that every item converts, so indexing it never fails.
    public static func decode(from response: HTTPResponse, limits: JSONLimits) throws -> Self {
        let page = Self(json: try JSONObject(responseBody: response.body, limits: limits))
        try page.validateItems()
        return page
    }
}

/// Walks a page's items, converting each as it is reached (an aggregated list scope by scope).
public struct APICollectionIterator<Page: APICollection>: IteratorProtocol {
    private var lists: [[JSONValue]]
    private var list = 0
    private var index = 0
    private var position = 0

    init(lists: [[JSONValue]]) {
        self.lists = lists
    }

    public mutating func next() -> Page.Item? {
        while list < lists.count {
            if index < lists[list].count {
                defer { index += 1; position += 1 }
                return Page.item(lists[list][index], at: position)
            }
            list += 1
            index = 0
        }
        return nil
    }
}
