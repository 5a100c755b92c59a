import Foundation

extension Translator {
    /// A resource's namespace: its methods as constructors and structs, its resources nested.
    func namespace(name: String, methods: [String: DiscoveryMethod], resources: [String: DiscoveryResource]) throws -> NamespaceDecl {
        let methodKeys = methods.keys.sorted()
        let resourceKeys = resources.keys.sorted()
        // Nested namespaces and method structs share one scope; functions are lowerCamel and cannot clash with them.
        let wanted = resourceKeys.map { key -> String in
            let candidate = Names.upperCamel(key)
            return Names.reservedTypeNames.contains(candidate) ? candidate + "Resource" : candidate
        } + methodKeys.map { Names.upperCamel($0) + "Query" }
        let names = Names.unique(wanted, avoiding: [moduleName])
        let functionNames = Names.unique(methodKeys.map { Names.lowerCamel($0) }).map(Names.escaped)
        var children: [NamespaceDecl] = []
        for (index, key) in resourceKeys.enumerated() {
            let resource = resources[key]!
            children.append(try namespace(name: names[index], methods: resource.methods ?? [:], resources: resource.resources ?? [:]))
        }
        var declared: [MethodDecl] = []
        for (index, key) in methodKeys.enumerated() {
            declared.append(try method(methods[key]!, functionName: functionNames[index], structName: names[resourceKeys.count + index]))
        }
        return NamespaceDecl(name: name, methods: declared, children: children)
    }

    private func method(_ method: DiscoveryMethod, functionName: String, structName: String) throws -> MethodDecl {
        let parameters = method.parameters ?? [:]
        let order = (method.parameterOrder ?? []).filter { parameters[$0] != nil }
        let requiredKeys = order + parameters.keys.sorted().filter {
            !order.contains($0) && (parameters[$0]!.required == true || parameters[$0]!.location == "path")
        }
        let optionalKeys = parameters.keys.sorted().filter { !requiredKeys.contains($0) }
        // Properties of the struct: the parameters, `fields`, the body, the upload and download switches.
        var reserved: Set<String> = ["fields", "standardParameters", "execution", "requestID", "makeQuery", "init", "Response"]
        let hasBody = method.request?.ref != nil
        let bodyName = parameters.keys.contains(where: { Names.lowerCamel($0) == "body" }) ? "requestBody" : "body"
        if hasBody { reserved.insert(bodyName) }
        // `mediaUpload` says it, as google-api-python-client reads it; every published document
        // also sets `supportsMediaUpload`, and an explicit `false` is honoured.
        let isUpload = method.supportsMediaUpload != false && method.mediaUpload?.protocols?.simple != nil
        if isUpload { reserved.insert("upload") }
        let swiftNames = Names.unique((requiredKeys + optionalKeys).map { Names.lowerCamel($0) }, avoiding: reserved).map(Names.escaped)

        let deduplication = DeduplicationParameter.find(in: method)
        var enums: [TypeDecl] = []
        var taken: Set<String> = [structName]
        var declared: [ParameterDecl] = []
        for (index, key) in (requiredKeys + optionalKeys).enumerated() {
            let parameter = parameters[key]!
            // An object parameter travels as JSON text, whatever its properties or map values.
            var type = parameter.type == "object" && parameter.ref == nil
                ? .named("JSONObject")
                : try swiftType(for: parameter, suggestedName: Names.upperCamel(key), nested: &enums, taken: &taken)
            if parameter.repeated == true { type = .array(type) }
            declared.append(ParameterDecl(swiftName: swiftNames[index], wireName: key, type: type,
                                          isPath: parameter.location == "path", repeated: parameter.repeated == true,
                                          documentation: Self.lines(parameter.description) + Self.notes(parameter)
                                              + (key == deduplication ? Self.deduplicationNote(parameter) : []),
                                          deprecated: parameter.deprecated == true))
        }
        let enumDecls = enums.compactMap { declaration -> EnumDecl? in
            if case .enumeration(let decl) = declaration.kind { return decl }
            return nil
        }
        var body: PropertyDecl?
        if let ref = method.request?.ref {
            guard let type = schemaNames[ref] else { throw GeneratorError.unresolvedReference(ref) }
            body = PropertyDecl(swiftName: bodyName, jsonKey: "", type: .named("\(moduleName).\(type)"), documentation: [])
        }
        var response: SwiftType?
        if let ref = method.response?.ref {
            guard let type = schemaNames[ref] else { throw GeneratorError.unresolvedReference(ref) }
            response = .named("\(moduleName).\(type)")
        }
        var protocols: [String] = []
        if isUpload {
            protocols.append("multipart")
            protocols.append("media")
            if method.mediaUpload?.protocols?.resumable != nil { protocols.append("resumable") }
        }
        return MethodDecl(
            functionName: functionName, structName: structName, documentation: Self.lines(method.description), id: method.id,
            httpMethod: method.httpMethod.uppercased(), path: method.path, responseType: response, requestBody: body,
            required: Array(declared.prefix(requiredKeys.count)), optional: Array(declared.dropFirst(requiredKeys.count)),
            enums: enumDecls,
            uploadPath: isUpload ? method.mediaUpload?.protocols?.simple?.path : nil, uploadProtocols: protocols,
            uploadAccept: isUpload ? method.mediaUpload?.accept ?? [] : [],
            uploadMaxSize: isUpload ? method.mediaUpload?.maxSize.flatMap(Self.byteCount) : nil,
            supportsMediaDownload: method.supportsMediaDownload == true,
            usesMediaDownloadService: method.supportsMediaDownload == true && method.useMediaDownloadService == true,
            deprecated: method.deprecated == true,
            idempotency: idempotency?.methods[method.id],
            deduplicationParameter: deduplication
        )
    }

    /// What Courier does with a deduplication parameter, under its own description.
    static func deduplicationNote(_ parameter: DiscoverySchema) -> [String] {
        [""] + (parameter.required == true ? [] : ["Left unset, Courier sets a new UUID each time the query is executed."])
            + ["Courier re-sends a request that carries it, with the same ID, after a failure that may have",
               "reached the server: the server ignores a repeat."]
    }

    /// `mediaUpload.maxSize`: bytes (`"10485760"`) or with a binary unit (`"10MB"`, `"1GB"`, `"5TB"`);
    /// nil, so no limit is checked, for anything else.
    static func byteCount(_ text: String) -> Int64? {
        let units: [(suffix: String, shift: Int64)] = [("KB", 10), ("MB", 20), ("GB", 30), ("TB", 40)]
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased()
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            guard let value = Int64(trimmed.dropLast(2)), value >= 0, value <= Int64.max >> unit.shift else { return nil }
            return value << unit.shift
        }
        return Int64(trimmed).flatMap { $0 >= 0 ? $0 : nil }
    }
}
