import Foundation

/// Turns a query into the HTTP request that carries it.
enum RequestBuilder {
    /// - Parameters:
    ///   - path: Another template than the query's (the upload path).
    ///   - uploadType: Adds `uploadType=` for an upload protocol.
    static func build<Response>(_ query: Query<Response>, configuration: ServiceActor.Configuration,
                                path: URITemplate? = nil, uploadType: String? = nil) throws(QueryError) -> HTTPRequest
    {
        // Filled here, once per execution: retries resend this request, so they repeat the ID.
        if let deduplicated = query.deduplicated {
            return try build(deduplicated, configuration: configuration, path: path, uploadType: uploadType)
        }
        let expanded = try (path ?? query.path).expand(query.pathParameters, requireAll: true)
        var root = rootURL(for: query, configuration: configuration).absoluteString
        if !root.hasSuffix("/") { root += "/" }
        var urlText: String
        if expanded.hasPrefix("/") {
            urlText = root + expanded.dropFirst()
        } else if query.downloadsMedia && query.usesMediaDownloadService && path == nil {
            urlText = root + "download/" + query.api.servicePath + expanded
        } else {
            urlText = root + query.api.servicePath + expanded
        }

        var parameters = query.parameters
        query.standardParameters.apply(to: &parameters)
        if let uploadType { parameters.set("uploadType", uploadType) }
        if let fields = query.fields { parameters.set("fields", fields) }
        if query.downloadsMedia { parameters.set("alt", "media") }
        parameters.set("prettyPrint", "false")
        if let key = configuration.auth.apiKey, parameters["key"] == nil { parameters.set("key", key) }
        urlText += (urlText.contains("?") ? "&" : "?") + parameters.encoded

        guard let url = URL(string: urlText) else {
            throw QueryError(code: .invalidQuery, message: "the query's URL is not valid: \(Redaction.url(urlText))")
        }
        var request = HTTPRequest(method: query.method, url: url, headers: query.headers)
        if !query.downloadsMedia, request.headers["Accept"] == nil {
            request.headers["Accept"] = "application/json"
        }
        if let applicationName = configuration.queries.applicationName, request.headers["User-Agent"] == nil {
            request.headers["User-Agent"] = "\(applicationName) \(configuration.transport.userAgent)"
        }
        if let body = query.body {
            request.body = .data(query.api.wireBody(body).serialized())
            if request.headers["Content-Type"] == nil {
                request.headers["Content-Type"] = "application/json; charset=utf-8"
            }
        }
        if let etag = query.etag {
            switch query.method {
            case .get, .head:
                request.headers["If-None-Match"] = etag
            case .put, .patch, .delete:
                // A weak tag cannot vouch for byte-identical state, which If-Match requires.
                if !etag.hasPrefix("W/") { request.headers["If-Match"] = etag }
            default:
                break
            }
        }
        if let timeouts = query.execution.timeouts { request.timeouts = timeouts }
        request.idempotency = query.requestIdempotency
        return request
    }

    /// A request an operation makes after its query's first, to a URL the server gave (an upload
    /// session's chunks and status queries): the query's own headers go with it, since some
    /// must be on every request (Cloud Storage's `x-goog-encryption-*` and `x-goog-user-project`),
    /// and so does the application's User-Agent.
    static func followUp<Response>(_ query: Query<Response>, method: HTTPMethod, url: URL,
                                   configuration: ServiceActor.Configuration) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url, headers: query.headers)
        if let applicationName = configuration.queries.applicationName, request.headers["User-Agent"] == nil {
            request.headers["User-Agent"] = "\(applicationName) \(configuration.transport.userAgent)"
        }
        if let timeouts = query.execution.timeouts { request.timeouts = timeouts }
        return request
    }

    /// A root URL set on the query or the service as it is; else the API's, in the service's universe.
    static func rootURL<Response>(for query: Query<Response>, configuration: ServiceActor.Configuration) -> URL {
        query.execution.rootURL ?? configuration.queries.rootURL ?? configuration.root(of: query.api)
    }
}
