/// Discovery document → ``SwiftModule``: names, types, nesting and collisions are decided here,
/// so rendering is a plain walk.
struct Translator {
    let document: DiscoveryDocument
    let moduleName: String
    let serviceName: String
    /// Schema id → its Swift type name at module level.
    private(set) var schemaNames: [String: String] = [:]

    init(document: DiscoveryDocument, moduleName: String, serviceName: String? = nil) {
        self.document = document
        self.moduleName = moduleName
        let service = serviceName ?? Names.upperCamel(document.name)
        self.serviceName = service
        let ids = (document.schemas ?? [:]).keys.sorted()
        let taken = Names.reservedTypeNames.union([service, moduleName])
        let wanted = ids.map { id -> String in
            let name = Names.upperCamel(id)
            return taken.contains(name) ? name + "Object" : name
        }
        schemaNames = Dictionary(uniqueKeysWithValues: zip(ids, Names.unique(wanted, avoiding: taken)))
    }

    func translate() throws -> SwiftModule {
        var types: [TypeDecl] = []
        var kinds: [(String, String)] = []
        for id in (document.schemas ?? [:]).keys.sorted() {
            let schema = document.schemas![id]!
            let name = schemaNames[id]!
            let type = try typeDecl(name: name, schema: schema)
            if case .object(let kind?, _, _) = type.kind { kinds.append((kind, name)) }
            types.append(type)
        }
        let scopes = (document.auth?.oauth2?.scopes ?? [:]).keys.sorted()
        let scopeNames = Names.unique(scopes.map { Names.escaped(Names.lowerCamel(Self.scopeSuffix($0))) })
        let service = ServiceDecl(
            name: serviceName,
            documentation: Self.lines(document.description) + (document.documentationLink.map { ["", "Documentation: \($0)"] } ?? []),
            apiName: document.name, version: document.version, rootURL: document.rootUrl, servicePath: document.servicePath,
            batchPath: document.batchPath ?? "batch",
            scopes: zip(scopes, scopeNames).map { url, name in
                ScopeDecl(name: name, url: url, documentation: Self.lines(document.auth?.oauth2?.scopes?[url]?.description))
            },
            kinds: kinds,
            namespace: try namespace(name: serviceName, methods: document.methods ?? [:], resources: document.resources ?? [:])
        )
        return SwiftModule(moduleName: moduleName, service: service, types: types)
    }

    /// `https://www.googleapis.com/auth/devstorage.full_control` → `devstorage.full_control`.
    static func scopeSuffix(_ url: String) -> String {
        if let range = url.range(of: "/auth/") {
            let suffix = url[range.upperBound...]
            return suffix.isEmpty ? "auth" : String(suffix)
        }
        return url.split(separator: "/").last.map(String.init) ?? url
    }

    static func lines(_ text: String?) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = String(line)
            while line.last?.isWhitespace == true { line.removeLast() }
            return line
        }
    }

    // MARK: Schemas

    private func typeDecl(name: String, schema: DiscoverySchema) throws -> TypeDecl {
        var nested: [TypeDecl] = []
        var nestedNames: Set<String> = [name]
        let documentation = Self.lines(schema.description)
        if schema.ref == nil, schema.type == "object" || (schema.type == nil && schema.properties != nil), let properties = schema.properties {
            let keys = properties.keys.sorted()
            let collection = Self.collection(properties)
            var declared: [PropertyDecl] = []
            let skipped: Set<String> = collection.map { $0 == "items" ? ["items", "nextPageToken"] : ["nextPageToken"] } ?? []
            let kept = keys.filter { !skipped.contains($0) }
            var swiftNames = kept.map { key -> String in
                let name = Names.lowerCamel(key)
                return Names.objectMembers.contains(name) ? name + "Field" : name
            }
            swiftNames = Names.unique(swiftNames).map(Names.escaped)
            for (key, swiftName) in zip(kept, swiftNames) {
                let property = properties[key]!
                let type = try swiftType(for: property, suggestedName: Names.upperCamel(key), nested: &nested, taken: &nestedNames)
                declared.append(PropertyDecl(swiftName: swiftName, jsonKey: key, type: type,
                                             documentation: Self.lines(property.description)))
            }
            var collectionDecl: TypeDecl.Collection?
            if let itemsKey = collection {
                let itemType: SwiftType
                if let property = declared.first(where: { $0.jsonKey == itemsKey }) {
                    itemType = property.type // declared above, with any inline item type
                } else {
                    itemType = try swiftType(for: properties[itemsKey]!, suggestedName: Names.upperCamel(itemsKey),
                                             nested: &nested, taken: &nestedNames)
                }
                if case .array(let element) = itemType { collectionDecl = TypeDecl.Collection(item: element, itemsKey: itemsKey) }
            }
            let kind = properties["kind"]?.defaultValue
            return TypeDecl(name: name, documentation: documentation,
                            kind: .object(kind: kind, properties: declared, collection: collectionDecl),
                            nested: nested, deprecated: schema.deprecated == true)
        }
        if let values = schema.enumValues, schema.type == "string" {
            return TypeDecl(name: name, documentation: documentation,
                            kind: .enumeration(enumDecl(name: name, values: values, descriptions: schema.enumDescriptions, documentation: [])),
                            nested: [], deprecated: schema.deprecated == true)
        }
        let type = try swiftType(for: schema, suggestedName: name + "Element", nested: &nested, taken: &nestedNames)
        return TypeDecl(name: name, documentation: documentation, kind: .alias(type), nested: nested, deprecated: schema.deprecated == true)
    }

    /// A list response: `nextPageToken` and one array to page through (`items` when there are several).
    private static func collection(_ properties: [String: DiscoverySchema]) -> String? {
        guard properties["nextPageToken"]?.type == "string" else { return nil }
        let arrays = properties.keys.filter { properties[$0]?.type == "array" }.sorted()
        if arrays.contains("items") { return "items" }
        return arrays.count == 1 ? arrays[0] : nil
    }

    /// The Swift type of a property or parameter; inline objects and enums become nested types.
    func swiftType(for schema: DiscoverySchema, suggestedName: String, nested: inout [TypeDecl],
                   taken: inout Set<String>) throws -> SwiftType {
        if let ref = schema.ref {
            guard let name = schemaNames[ref] else { throw GeneratorError.unresolvedReference(ref) }
            return .named("\(moduleName).\(name)")
        }
        switch schema.type {
        case "string":
            if let values = schema.enumValues {
                let name = uniqueNested(suggestedName, taken: &taken)
                nested.append(TypeDecl(name: name, documentation: [], kind: .enumeration(
                    enumDecl(name: name, values: values, descriptions: schema.enumDescriptions, documentation: [])),
                    nested: [], deprecated: false))
                return .named(name)
            }
            return .named(Self.stringType(format: schema.format))
        case "integer":
            switch schema.format {
            case "int64": return .named("Int64")
            case "uint64": return .named("UInt64")
            case "uint32": return .named("UInt32")
            case "int32": return .named("Int32")
            default: return .named("Int")
            }
        case "number":
            return .named(schema.format == "float" ? "Float" : "Double")
        case "boolean":
            return .named("Bool")
        case "any":
            return .named("JSONValue")
        case "array":
            guard let items = schema.items else { return .array(.named("JSONValue")) }
            return .array(try swiftType(for: items, suggestedName: suggestedName, nested: &nested, taken: &taken))
        case "object", nil:
            if let properties = schema.properties, !properties.isEmpty {
                let name = uniqueNested(suggestedName, taken: &taken)
                nested.append(try typeDecl(name: name, schema: schema))
                return .named(name)
            }
            if let additional = schema.additionalProperties {
                return .dictionary(try swiftType(for: additional, suggestedName: suggestedName + "Value", nested: &nested, taken: &taken))
            }
            return schema.type == nil ? .named("JSONValue") : .named("JSONObject")
        default:
            return .named("JSONValue")
        }
    }

    static func stringType(format: String?) -> String {
        switch format {
        case "int64": "Int64"
        case "uint64": "UInt64"
        case "int32": "Int32"
        case "uint32": "UInt32"
        case "date-time", "google-datetime": "Date"
        case "google-duration": "Duration"
        case "byte": "Data"
        default: "String"
        }
    }

    private func uniqueNested(_ suggested: String, taken: inout Set<String>) -> String {
        var base = suggested
        if Names.reservedTypeNames.contains(base) || base == moduleName || base == serviceName { base += "Value" }
        let name = Names.unique([base], avoiding: taken)[0]
        taken.insert(name)
        return name
    }

    func enumDecl(name: String, values: [String], descriptions: [String]?, documentation: [String]) -> EnumDecl {
        let reserved: Set<String> = ["rawValue", "description", "jsonValue", "queryParameterText", "hashValue", "init", "hash", "encode"]
        let names = Names.unique(values.map { Names.lowerCamel($0) }, avoiding: reserved).map(Names.escaped)
        let cases = values.indices.map { index in
            (swiftName: names[index], value: values[index],
             documentation: Self.lines(descriptions.flatMap { index < $0.count ? $0[index] : nil }))
        }
        return EnumDecl(name: name, documentation: documentation, cases: cases)
    }
}
