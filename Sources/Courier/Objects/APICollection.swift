/// A page of results: an object with an array of items and, when more exist, a `nextPageToken`.
///
/// ```swift
/// struct NoteList: APICollection {
///     typealias Item = Note
///     var json: JSONObject
///     var userProperties = UserProperties()
///     init(json: JSONObject = [:]) { self.json = json }
/// }
/// for note in list.items { print(note.title ?? "") }
/// ```
public protocol APICollection: APIPage {
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
/// ``ServiceActor/pages(of:)`` walks it even when its items cannot be told apart (two arrays,
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
        guard let listKey = Self.itemsListKey else { return json[Self.itemsKey]?.arrayValue ?? [] }
        guard let scopes = json[Self.itemsKey]?.objectValue else { return [] }
        return scopes.keys.sorted().flatMap { scopes[$0]?.objectValue?[listKey]?.arrayValue ?? [] }
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

    /// Item `index` of this page, as GTLR collections subscript.
    public subscript(index: Int) -> Item { items[index] }

    /// The raw JSON of each item, for kind resolution of mixed collections.
    public var itemsJSON: [JSONObject] {
        itemsJSONValues.compactMap(\.objectValue)
    }
}
