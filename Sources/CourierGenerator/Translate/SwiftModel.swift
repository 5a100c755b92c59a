
/// The generated module as Swift declarations, before any text: what the translator builds from
/// a discovery document and the renderer prints. Small on purpose: only what a client needs.
struct SwiftModule: Equatable {
    var moduleName: String
    /// The namespace enum of the service (`Storage`): API description, scopes, resources.
    var service: ServiceDecl
    /// One type per top-level schema, sorted by name.
    var types: [TypeDecl]
}

struct ServiceDecl: Equatable {
    var name: String
    var documentation: [String]
    var apiName: String
    var version: String
    /// The document's `revision` and `etag`, recorded in each file's header.
    var stamp: DiscoveryStamp
    var rootURL: String
    var servicePath: String
    var batchPath: String
    /// Discovery's `dataWrapper` feature: bodies travel as `{"data": …}`.
    var dataWrapper = false
    var scopes: [ScopeDecl]
    /// `kind` → type, for the resolver.
    var kinds: [(kind: String, typeName: String)]
    var namespace: NamespaceDecl

    static func == (lhs: ServiceDecl, rhs: ServiceDecl) -> Bool {
        lhs.name == rhs.name && lhs.namespace == rhs.namespace && lhs.scopes == rhs.scopes
            && lhs.kinds.map(\.kind) == rhs.kinds.map(\.kind) && lhs.kinds.map(\.typeName) == rhs.kinds.map(\.typeName)
    }
}

struct ScopeDecl: Equatable {
    var name: String
    var url: String
    var documentation: [String]
}

/// A resource: `enum Objects { static func list(…) -> ListQuery; struct ListQuery … }`.
struct NamespaceDecl: Equatable {
    var name: String
    var methods: [MethodDecl]
    var children: [NamespaceDecl]
}

struct MethodDecl: Equatable {
    /// `list`: the static constructor.
    var functionName: String
    /// `ListQuery`: the struct holding the parameters.
    var structName: String
    var documentation: [String]
    var id: String
    var httpMethod: String
    var path: String
    var responseType: SwiftType?
    var requestBody: PropertyDecl?
    /// Required parameters, in `parameterOrder`: the constructor's arguments.
    var required: [ParameterDecl]
    /// Optional parameters: properties of the struct.
    var optional: [ParameterDecl]
    var enums: [EnumDecl]
    /// The `simple` upload path (also used for resumable uploads, with `uploadType=resumable`).
    var uploadPath: String?
    var uploadProtocols: [String]
    /// `mediaUpload.accept`: MIME type patterns the upload takes.
    var uploadAccept: [String]
    /// `mediaUpload.maxSize` in bytes.
    var uploadMaxSize: Int64?
    var supportsMediaDownload: Bool
    var usesMediaDownloadService: Bool
    var deprecated: Bool
    /// The method's retry class from the API's ``IdempotencyTable``; nil keeps HTTP's rule.
    var idempotency: IdempotencyClass? = nil
    /// The parameter by which the server ignores a repeated request (``DeduplicationParameter``).
    var deduplicationParameter: String? = nil
}

struct ParameterDecl: Equatable {
    var swiftName: String
    var wireName: String
    var type: SwiftType
    var isPath: Bool
    var repeated: Bool
    var documentation: [String]
    var deprecated = false
}

struct PropertyDecl: Equatable {
    var swiftName: String
    var jsonKey: String
    var type: SwiftType
    var documentation: [String]
    var deprecated = false
}

/// A schema's Swift form.
struct TypeDecl: Equatable {
    enum Kind: Equatable {
        /// An `APIObject`; an `APIPage` when `page` (it has a `nextPageToken`), and an
        /// `APICollection` when its items are known too.
        case object(kind: String?, properties: [PropertyDecl], page: Bool, collection: Collection?)
        case enumeration(EnumDecl)
        /// A schema that is an array, a map or a scalar.
        case alias(SwiftType)
    }

    struct Collection: Equatable {
        var item: SwiftType
        var itemsKey: String
        /// An aggregated list: `itemsKey` is a map of scopes, each with its items under this key.
        var listKey: String?
    }

    var name: String
    var documentation: [String]
    var kind: Kind
    var nested: [TypeDecl]
    var deprecated: Bool
}

struct EnumDecl: Equatable {
    var name: String
    var documentation: [String]
    var cases: [(swiftName: String, value: String, documentation: [String], deprecated: Bool)]

    static func == (lhs: EnumDecl, rhs: EnumDecl) -> Bool {
        lhs.name == rhs.name && lhs.cases.map(\.swiftName) == rhs.cases.map(\.swiftName)
            && lhs.cases.map(\.value) == rhs.cases.map(\.value)
    }
}

/// A type as it is spelled in generated code.
indirect enum SwiftType: Equatable {
    case named(String)
    case array(SwiftType)
    case dictionary(SwiftType)

    var spelling: String {
        switch self {
        case .named(let name): name
        case .array(let element): "[\(element.spelling)]"
        case .dictionary(let value): "[String: \(value.spelling)]"
        }
    }
}
