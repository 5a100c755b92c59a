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
public protocol APICollection: APIObject {
    associatedtype Item: JSONConvertible
    /// The key of the items array: "items" unless the API names it otherwise ("files", "tasks"…).
    static var itemsKey: String { get }
}

extension APICollection {
    public static var itemsKey: String { "items" }

    /// The items of this page (of every page, after ``PagingPolicy/fetchAll(maxPages:whenLimitReached:)``).
    @inlinable public var items: [Item] {
        get { self[Self.itemsKey] ?? [] }
        set { self[Self.itemsKey] = newValue }
    }

    /// The token that fetches the next page; nil on the last page.
    public var nextPageToken: String? {
        get { self["nextPageToken"] }
        set { self["nextPageToken"] = newValue }
    }

    /// Item `index` of this page, as GTLR collections subscript.
    public subscript(index: Int) -> Item { items[index] }

    /// The raw JSON of each item, for kind resolution of mixed collections.
    public var itemsJSON: [JSONObject] {
        json[Self.itemsKey]?.arrayValue?.compactMap(\.objectValue) ?? []
    }
}
