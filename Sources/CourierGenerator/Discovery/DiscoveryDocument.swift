import Foundation

/// A Google Discovery document (the REST flavour, `discoveryVersion: v1`): what the generator
/// reads. Only the members the generator uses are modelled; everything else is ignored.
public struct DiscoveryDocument: Decodable, Sendable {
    public var name: String
    public var version: String
    /// The document's revision (a date, `20261009`): what changed when Google changed the API.
    public var revision: String?
    /// The document's etag: changes with any change to the document.
    public var etag: String?
    public var title: String?
    public var description: String?
    public var documentationLink: String?
    public var rootUrl: String
    public var servicePath: String
    public var batchPath: String?
    /// `dataWrapper`: bodies travel as `{"data": …}` (the Cloud Translation API v2).
    public var features: [String]?
    public var schemas: [String: DiscoverySchema]?
    public var resources: [String: DiscoveryResource]?
    public var methods: [String: DiscoveryMethod]?
    public var auth: Auth?

    enum CodingKeys: String, CodingKey {
        case name, version, revision, etag, title, description, documentationLink, rootUrl, servicePath, batchPath
        case schemas, resources, methods, auth, baseUrl, basePath, features
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        version = try container.decode(String.self, forKey: .version)
        revision = try container.decodeIfPresent(String.self, forKey: .revision)
        etag = try container.decodeIfPresent(String.self, forKey: .etag)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        documentationLink = try container.decodeIfPresent(String.self, forKey: .documentationLink)
        batchPath = try container.decodeIfPresent(String.self, forKey: .batchPath)
        features = try? container.decodeIfPresent([String].self, forKey: .features)
        schemas = try container.decodeIfPresent([String: DiscoverySchema].self, forKey: .schemas)
        resources = try container.decodeIfPresent([String: DiscoveryResource].self, forKey: .resources)
        methods = try container.decodeIfPresent([String: DiscoveryMethod].self, forKey: .methods)
        auth = try container.decodeIfPresent(Auth.self, forKey: .auth)
        if let rootUrl = try container.decodeIfPresent(String.self, forKey: .rootUrl) {
            self.rootUrl = rootUrl
            servicePath = try container.decode(String.self, forKey: .servicePath)
        } else if let baseUrl = try container.decodeIfPresent(String.self, forKey: .baseUrl),
                  let split = Self.split(baseUrl: baseUrl) {
            // Documents older than `rootUrl` name the whole base; google-api-python-client reads it so.
            (rootUrl, servicePath) = split
        } else if let basePath = try container.decodeIfPresent(String.self, forKey: .basePath) {
            // A base path alone (google-api-python-client's test `zoo.json`): relative to where the
            // document came from, which for Google's APIs was www.googleapis.com. The generated
            // client's root can be set at run time (`configuration.queries.rootURL`).
            rootUrl = "https://www.googleapis.com/"
            servicePath = String(basePath.drop { $0 == "/" })
        } else {
            throw DecodingError.keyNotFound(CodingKeys.rootUrl, .init(codingPath: [], debugDescription: "no rootUrl, baseUrl or basePath"))
        }
    }

    /// `https://host/a/b/` as `https://host/` and `a/b/`; nil unless it is an absolute http(s) URL.
    static func split(baseUrl: String) -> (root: String, servicePath: String)? {
        guard let components = URLComponents(string: baseUrl), let scheme = components.scheme, scheme == "https" || scheme == "http",
              let host = components.host, !host.isEmpty else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        return ("\(scheme)://\(host)\(port)/", String(components.path.drop { $0 == "/" }))
    }

    public struct Auth: Decodable, Sendable {
        public var oauth2: OAuth2?
    }

    public struct OAuth2: Decodable, Sendable {
        public var scopes: [String: Scope]?
    }

    public struct Scope: Decodable, Sendable {
        public var description: String?
    }

    /// Parses a document, with the failing member's path in the error.
    public static func parse(_ data: Data) throws -> DiscoveryDocument {
        do {
            return try JSONDecoder().decode(DiscoveryDocument.self, from: data)
        } catch let error as DecodingError {
            throw GeneratorError.invalidDiscoveryDocument(Self.describe(error))
        } catch {
            throw GeneratorError.invalidDiscoveryDocument("\(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)): missing \"\(key.stringValue)\""
        @unknown default:
            return "\(error)"
        }
    }
}

/// A JSON schema as discovery documents write them. A class, because schemas nest.
public final class DiscoverySchema: Decodable, Sendable {
    public let id: String?
    public let type: String?
    public let ref: String?
    public let format: String?
    public let description: String?
    public let properties: [String: DiscoverySchema]?
    public let additionalProperties: DiscoverySchema?
    public let items: DiscoverySchema?
    public let enumValues: [String]?
    public let enumDescriptions: [String]?
    public let defaultValue: String?
    public let repeated: Bool?
    public let required: Bool?
    public let location: String?
    public let deprecated: Bool?
    public let readOnly: Bool?
    /// Parallel to `enumValues`: which values the API deprecated.
    public let enumDeprecated: [Bool]?
    /// `annotations.required`: the methods that need this property set.
    public let requiredBy: [String]?
    public let minimum: String?
    public let maximum: String?

    enum CodingKeys: String, CodingKey {
        case id, type, format, description, properties, additionalProperties, items, enumDescriptions
        case repeated, required, location, deprecated, readOnly, enumDeprecated, annotations, minimum, maximum
        case ref = "$ref"
        case enumValues = "enum"
        case defaultValue = "default"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(String.self, forKey: .id)
        type = try container.decodeIfPresent(String.self, forKey: .type)
        ref = try container.decodeIfPresent(String.self, forKey: .ref)
        format = try container.decodeIfPresent(String.self, forKey: .format)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        properties = try container.decodeIfPresent([String: DiscoverySchema].self, forKey: .properties)
        // `additionalProperties` is a schema; a boolean `true` (allowed by JSON Schema) means "anything".
        if let schema = try? container.decodeIfPresent(DiscoverySchema.self, forKey: .additionalProperties) {
            additionalProperties = schema
        } else {
            additionalProperties = nil
        }
        items = try container.decodeIfPresent(DiscoverySchema.self, forKey: .items)
        enumValues = try container.decodeIfPresent([String].self, forKey: .enumValues)
        enumDescriptions = try container.decodeIfPresent([String].self, forKey: .enumDescriptions)
        defaultValue = try? container.decodeIfPresent(String.self, forKey: .defaultValue)
        repeated = try container.decodeIfPresent(Bool.self, forKey: .repeated)
        required = try container.decodeIfPresent(Bool.self, forKey: .required)
        location = try container.decodeIfPresent(String.self, forKey: .location)
        deprecated = try container.decodeIfPresent(Bool.self, forKey: .deprecated)
        readOnly = try container.decodeIfPresent(Bool.self, forKey: .readOnly)
        enumDeprecated = try? container.decodeIfPresent([Bool].self, forKey: .enumDeprecated)
        requiredBy = (try? container.decodeIfPresent([String: [String]].self, forKey: .annotations))??["required"]
        minimum = try? container.decodeIfPresent(String.self, forKey: .minimum)
        maximum = try? container.decodeIfPresent(String.self, forKey: .maximum)
    }
}

/// A resource: methods and nested resources.
public struct DiscoveryResource: Decodable, Sendable {
    public var methods: [String: DiscoveryMethod]?
    public var resources: [String: DiscoveryResource]?
}

/// One REST method.
public struct DiscoveryMethod: Decodable, Sendable {
    public var id: String
    public var path: String
    public var flatPath: String?
    public var httpMethod: String
    public var description: String?
    public var parameters: [String: DiscoverySchema]?
    public var parameterOrder: [String]?
    public var request: Reference?
    public var response: Reference?
    public var scopes: [String]?
    public var supportsMediaUpload: Bool?
    public var supportsMediaDownload: Bool?
    /// Media downloads go to the download service (`<root>download/<service path>…`).
    public var useMediaDownloadService: Bool?
    public var mediaUpload: MediaUpload?
    public var deprecated: Bool?

    public struct Reference: Decodable, Sendable {
        public var ref: String?
        enum CodingKeys: String, CodingKey { case ref = "$ref" }
    }

    public struct MediaUpload: Decodable, Sendable {
        public var accept: [String]?
        public var maxSize: String?
        public var protocols: Protocols?
    }

    public struct Protocols: Decodable, Sendable {
        public var simple: UploadProtocol?
        public var resumable: UploadProtocol?
    }

    public struct UploadProtocol: Decodable, Sendable {
        public var multipart: Bool?
        public var path: String
    }
}
