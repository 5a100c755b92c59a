/// A typed view over a JSON object, as GTLR's `GTLRObject` is.
///
/// The object *is* its JSON: typed properties read and write ``json``, so fields the type does
/// not declare survive a read-modify-write round trip untouched, in the server's order. Raw
/// access by key sits next to the typed properties (GTLR's `JSONValueForKey:`):
///
/// ```swift
/// struct Note: APIObject {
///     static let kind: String? = "notes#note"
///     var json: JSONObject
///     var userProperties = UserProperties()
///     init(json: JSONObject = [:]) { self.json = json }
///
///     var title: String? { get { self["title"] } set { self["title"] = newValue } }
/// }
///
/// var note = try await service.execute(query)
/// note.title = "Renamed"               // typed
/// let date = note.json["date"]         // raw, even if Note declares no `date`
/// ```
///
/// Printed (`print`, `"\(object)"`, `dump`, a log line), an object shows its type and its JSON
/// with every secret replaced by `_snip_` (``Redaction/json(_:)``: an HMAC key's `secret`, a new
/// service-account key's `privateKeyData`, a secret version's `payload.data`); ``json`` and
/// ``jsonString`` are the data itself.
public protocol APIObject: JSONConvertible, Codable, Hashable, QueryResponse, CustomDebugStringConvertible,
    CustomReflectable
{
    /// Every field of the object, declared or not.
    var json: JSONObject { get set }
    /// Local data that is never serialized, compared or sent.
    var userProperties: UserProperties { get set }
    init(json: JSONObject)
    /// The `kind` string that identifies this type to an ``ObjectResolver``.
    static var kind: String? { get }
}

extension APIObject {
    public static var kind: String? { nil }

    /// A field converted to `T`; nil when missing, null or of another shape. Setting nil removes
    /// the field; use ``setNull(_:)`` to send an explicit JSON null.
    @inlinable public subscript<T: JSONConvertible>(key: String) -> T? {
        get { json[key].flatMap(T.init(jsonValue:)) }
        set { json[key] = newValue?.jsonValue }
    }

    /// Sets `key` to an explicit JSON null: in a patch, it clears the field on the server.
    public mutating func setNull(_ key: String) {
        json[key] = .null
    }

    /// Whether `key` holds an explicit JSON null.
    public func isNull(_ key: String) -> Bool {
        json[key] == .null
    }

    /// The object's `kind` field, if it has one.
    public var kindString: String? { json["kind"]?.stringValue }

    public init?(jsonValue: JSONValue) {
        guard case .object(let object) = jsonValue else { return nil }
        self.init(json: object)
    }

    public var jsonValue: JSONValue { .object(json) }

    public init(from decoder: any Decoder) throws {
        self.init(json: try JSONObject(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// Objects are equal when their JSON is; user properties do not count.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.json == rhs.json }
    public func hash(into hasher: inout Hasher) { hasher.combine(json) }

    /// Compact JSON text of the object.
    public var jsonString: String { String(decoding: json.serialized(), as: UTF8.self) }

    /// The type and the JSON with its secrets replaced: what `print`, string interpolation and
    /// `debugPrint` show. Not ``CustomStringConvertible``: generated objects may have a
    /// `description` field.
    public var debugDescription: String {
        "\(Self.self) \(String(decoding: Redaction.json(.object(json)).serialized(), as: UTF8.self))"
    }

    /// What `dump` and debuggers show: the redacted JSON, not the stored fields.
    public var customMirror: Mirror {
        Mirror(self, children: ["json": String(decoding: Redaction.json(.object(json)).serialized(), as: UTF8.self)],
               displayStyle: .struct)
    }
}

/// Local data carried on an object and never serialized (GTLR's `userProperties`).
public struct UserProperties: Sendable {
    private var values: [String: any Sendable] = [:]

    public init() {}

    public subscript(key: String) -> (any Sendable)? {
        get { values[key] }
        set { values[key] = newValue }
    }

    public var keys: [String] { Array(values.keys) }
}

/// An object of no particular type: its JSON and nothing more.
public struct GenericObject: APIObject {
    public var json: JSONObject
    public var userProperties = UserProperties()
    public init(json: JSONObject = [:]) { self.json = json }
}
