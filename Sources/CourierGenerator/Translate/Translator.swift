/// Discovery document → ``SwiftModule``: names, types, nesting and collisions are decided here,
/// so rendering is a plain walk.
struct Translator {
    let document: DiscoveryDocument
    let moduleName: String
    let serviceName: String
    /// The API's retry classes by method ID, when it has a table.
    let idempotency: IdempotencyTable?
    /// Schema id → its Swift type name at module level.
    private(set) var schemaNames: [String: String] = [:]
    /// Schema id → the resources whose paged methods (taking `pageToken`) answer with it.
    private(set) var pagedResources: [String: Set<String>] = [:]

    init(document: DiscoveryDocument, moduleName: String, serviceName: String? = nil, idempotency: IdempotencyTable? = nil) {
        self.document = document
        self.idempotency = idempotency ?? IdempotencyTable.builtIn(api: document.name, version: document.version)
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
        func visit(_ resources: [String: DiscoveryResource]) {
            for (name, resource) in resources {
                for method in (resource.methods ?? [:]).values where method.parameters?["pageToken"] != nil {
                    if let response = method.response?.ref { pagedResources[response, default: []].insert(name) }
                }
                visit(resource.resources ?? [:])
            }
        }
        visit(document.resources ?? [:])
    }

    func translate() throws -> SwiftModule {
        var types: [TypeDecl] = []
        var kinds: [(String, String)] = []
        for id in (document.schemas ?? [:]).keys.sorted() {
            let schema = document.schemas![id]!
            let name = schemaNames[id]!
            let type = try typeDecl(id: id, name: name, schema: schema)
            if case .object(let kind?, _, _, _) = type.kind { kinds.append((kind, name)) }
            types.append(type)
        }
        let scopes = (document.auth?.oauth2?.scopes ?? [:]).keys.sorted()
        let scopeNames = Names.unique(scopes.map { Names.escaped(Names.lowerCamel(Self.scopeSuffix($0))) })
        let service = ServiceDecl(
            name: serviceName,
            documentation: Self.lines(document.description) + (document.documentationLink.map { ["", "Documentation: \($0)"] } ?? []),
            apiName: document.name, version: document.version, stamp: DiscoveryStamp(document),
            rootURL: document.rootUrl, servicePath: document.servicePath,
            batchPath: document.batchPath ?? "batch",
            dataWrapper: document.features?.contains("dataWrapper") == true,
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

    private func typeDecl(id: String, name: String, schema: DiscoverySchema) throws -> TypeDecl {
        var nested: [TypeDecl] = []
        var nestedNames: Set<String> = [name]
        let documentation = Self.lines(schema.description)
        if schema.ref == nil, schema.type == "object" || (schema.type == nil && schema.properties != nil), let properties = schema.properties {
            let keys = properties.keys.sorted()
            let page = properties["nextPageToken"]?.type == "string"
            // A page may be a Swift collection of its items: its names must not shadow Collection's.
            if page { nestedNames.formUnion(Names.collectionTypes) }
            let collection = page ? collectionShape(properties, resources: pagedResources[id] ?? []) : nil
            var declared: [PropertyDecl] = []
            // `items` and `nextPageToken` come from the protocols; another items key stays a property too.
            var skipped: Set<String> = page ? ["nextPageToken"] : []
            if collection?.itemsKey == "items" { skipped.insert("items") }
            let kept = keys.filter { !skipped.contains($0) }
            var swiftNames = kept.map { key -> String in
                let name = Names.lowerCamel(key)
                let taken = Names.objectMembers.contains(name) || (page && Names.collectionMembers.contains(name))
                return taken ? name + "Field" : name
            }
            swiftNames = Names.unique(swiftNames).map(Names.escaped)
            for (key, swiftName) in zip(kept, swiftNames) {
                let property = properties[key]!
                let type = try swiftType(for: property, suggestedName: Names.upperCamel(key), nested: &nested, taken: &nestedNames)
                declared.append(PropertyDecl(swiftName: swiftName, jsonKey: key, type: type,
                                             documentation: Self.lines(property.description) + Self.notes(property),
                                             deprecated: property.deprecated == true))
            }
            var collectionDecl: TypeDecl.Collection?
            if let collection {
                let itemType: SwiftType
                if let property = declared.first(where: { $0.jsonKey == collection.itemsKey }), collection.listKey == nil {
                    itemType = property.type // declared above, with any inline item type
                } else {
                    itemType = try swiftType(for: collection.list, suggestedName: Names.upperCamel(collection.listKey ?? collection.itemsKey),
                                             nested: &nested, taken: &nestedNames)
                }
                if case .array(let element) = itemType {
                    collectionDecl = TypeDecl.Collection(item: element, itemsKey: collection.itemsKey, listKey: collection.listKey)
                }
            }
            let kind = properties["kind"]?.defaultValue
            return TypeDecl(name: name, documentation: documentation,
                            kind: .object(kind: kind, properties: declared, page: page, collection: collectionDecl),
                            nested: nested, deprecated: schema.deprecated == true)
        }
        if let values = schema.enumValues, schema.type == "string" {
            return TypeDecl(name: name, documentation: documentation,
                            kind: .enumeration(enumDecl(name: name, values: values, descriptions: schema.enumDescriptions,
                                                               deprecated: schema.enumDeprecated, documentation: [])),
                            nested: [], deprecated: schema.deprecated == true)
        }
        let type = try swiftType(for: schema, suggestedName: name + "Element", nested: &nested, taken: &nestedNames)
        return TypeDecl(name: name, documentation: documentation, kind: .alias(type), nested: nested, deprecated: schema.deprecated == true)
    }

    /// Where a page's items are (Docs/Generator.md, "Paging"), tried in this order:
    /// 1. an array named `items`;
    /// 2. a map named `items` whose values each hold one array (an aggregated list: the items
    ///    of every scope);
    /// 3. the only array once those that report what could not be listed are set aside
    ///    (`unreachable…`, AIP-217's locations that did not answer, and `warnings`);
    /// 4. the array named like a resource whose paged method answers with this schema, or like
    ///    the end of its name (`usageReports` for `customerUsageReports`).
    /// Otherwise nil: the page still pages (``APIPage``), but has no single list of items.
    private func collectionShape(_ properties: [String: DiscoverySchema], resources: Set<String>)
        -> (itemsKey: String, listKey: String?, list: DiscoverySchema)?
    {
        let arrays = properties.keys.filter { properties[$0]?.type == "array" }.sorted()
        if let items = properties["items"], items.type == "array" { return ("items", nil, items) }
        if let map = properties["items"]?.additionalProperties, let scoped = resolved(map)?.properties {
            let lists = scoped.keys.filter { scoped[$0]?.type == "array" }.sorted()
            if lists.count == 1 { return ("items", lists[0], scoped[lists[0]]!) }
        }
        let listed = arrays.filter { !$0.hasPrefix("unreachable") && $0 != "warnings" }
        if listed.count == 1 { return (listed[0], nil, properties[listed[0]]!) }
        let named = listed.filter { key in resources.contains { $0.lowercased().hasSuffix(key.lowercased()) } }
        if named.count == 1 { return (named[0], nil, properties[named[0]]!) }
        return nil
    }

    /// `schema`, or the schema its `$ref` names.
    private func resolved(_ schema: DiscoverySchema) -> DiscoverySchema? {
        guard let ref = schema.ref else { return schema }
        return document.schemas?[ref]
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
                    enumDecl(name: name, values: values, descriptions: schema.enumDescriptions, deprecated: schema.enumDeprecated,
                             documentation: [])),
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
                nested.append(try typeDecl(id: "", name: name, schema: schema)) // inline: no method answers with it
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
        case "date": "CalendarDate"
        case "google-duration": "Duration"
        case "byte": "Data"
        default: "String"
        }
    }

    /// What the document says of a property or parameter besides its description: output only,
    /// the methods that require it, its default and bounds.
    static func notes(_ schema: DiscoverySchema) -> [String] {
        var notes: [String] = []
        if schema.readOnly == true { notes.append("Output only: the server sets it, and ignores it in a request.") }
        if let methods = schema.requiredBy, !methods.isEmpty { notes.append("Required by \(methods.map { "`\($0)`" }.joined(separator: ", ")).") }
        if let value = schema.defaultValue, schema.type != "object" { notes.append("Default: `\(value)`.") }
        switch (schema.minimum, schema.maximum) {
        case let (minimum?, maximum?): notes.append("From \(minimum) to \(maximum).")
        case let (minimum?, nil): notes.append("At least \(minimum).")
        case let (nil, maximum?): notes.append("At most \(maximum).")
        case (nil, nil): break
        }
        return notes.isEmpty ? [] : (schema.description?.isEmpty == false ? [""] : []) + notes
    }

    private func uniqueNested(_ suggested: String, taken: inout Set<String>) -> String {
        var base = suggested
        if Names.reservedTypeNames.contains(base) || base == moduleName || base == serviceName { base += "Value" }
        let name = Names.unique([base], avoiding: taken)[0]
        taken.insert(name)
        return name
    }

    func enumDecl(name: String, values: [String], descriptions: [String]?, deprecated: [Bool]? = nil,
                  documentation: [String]) -> EnumDecl {
        let reserved: Set<String> = ["rawValue", "description", "jsonValue", "queryParameterText", "hashValue", "init", "hash", "encode"]
        let names = Names.unique(values.map { Names.lowerCamel($0) }, avoiding: reserved).map(Names.escaped)
        let cases = values.indices.map { index in
            (swiftName: names[index], value: values[index],
             documentation: Self.lines(descriptions.flatMap { index < $0.count ? $0[index] : nil }),
             deprecated: deprecated.map { index < $0.count && $0[index] } ?? false)
        }
        return EnumDecl(name: name, documentation: documentation, cases: cases)
    }
}
