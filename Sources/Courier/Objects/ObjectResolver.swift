/// Picks the Swift type of a JSON object from its `kind` (or HTTPRiot's `type`), with
/// surrogates that substitute one type for another, as GTLR's `GTLRObjectClassResolver` does.
///
/// Swift objects are structs, so resolution returns an existential to cast:
///
/// ```swift
/// let resolver = ObjectResolver(types: [Game.self, Score.self])
/// switch resolver.resolve(game) {            // declared Game, but the server sent a score
/// case let score as Score: print(score.outcome ?? "")
/// default: break
/// }
/// ```
public struct ObjectResolver: Sendable {
    /// `kind` (or `type`) strings to types.
    public var kinds: [String: any APIObject.Type]
    /// Types to the types that stand in for them.
    public var surrogates: [ObjectIdentifier: any APIObject.Type]
    /// Keys whose string names the kind, tried in order.
    public var kindKeys: [String]

    /// Maps each type's ``APIObject/kind`` to it.
    public init(types: [any APIObject.Type] = [], surrogates: [ObjectIdentifier: any APIObject.Type] = [:],
                kindKeys: [String] = ["kind", "type"]) {
        var kinds: [String: any APIObject.Type] = [:]
        for type in types { if let kind = type.kind { kinds[kind] = type } }
        self.kinds = kinds
        self.surrogates = surrogates
        self.kindKeys = kindKeys
    }

    /// Maps `kind` to `type`, whatever the type's own ``APIObject/kind`` says.
    public mutating func register(_ type: any APIObject.Type, forKind kind: String) {
        kinds[kind] = type
    }

    /// Makes `surrogate` stand in for `original` wherever `original` would be resolved.
    public mutating func substitute(_ original: any APIObject.Type, with surrogate: any APIObject.Type) {
        surrogates[ObjectIdentifier(original)] = surrogate
    }

    /// The type for `json`: by kind when known, else `expected`; then its surrogate, if any.
    public func type(for json: JSONObject, expected: any APIObject.Type) -> any APIObject.Type {
        var resolved = expected
        for key in kindKeys {
            if let kind = json[key]?.stringValue, let type = kinds[kind] {
                resolved = type
                break
            }
        }
        return surrogates[ObjectIdentifier(resolved)] ?? resolved
    }

    /// An instance of the resolved type for `json`.
    public func resolve(_ json: JSONObject, expected: any APIObject.Type = GenericObject.self) -> any APIObject {
        type(for: json, expected: expected).init(json: json)
    }

    /// `object` as the type its JSON resolves to; user properties carry over.
    public func resolve<Object: APIObject>(_ object: Object) -> any APIObject {
        var resolved = type(for: object.json, expected: Object.self).init(json: object.json)
        resolved.userProperties = object.userProperties
        return resolved
    }

    /// Each item of `collection` as the type its JSON resolves to.
    public func resolveItems<Collection: APICollection>(of collection: Collection) -> [any APIObject]
    where Collection.Item: APIObject {
        collection.itemsJSON.map { resolve($0, expected: Collection.Item.self) }
    }

    /// `self` with the kinds and surrogates of `overrides` taking precedence.
    public func merging(_ overrides: ObjectResolver) -> ObjectResolver {
        var merged = self
        merged.kinds.merge(overrides.kinds) { _, new in new }
        merged.surrogates.merge(overrides.surrogates) { _, new in new }
        return merged
    }
}
