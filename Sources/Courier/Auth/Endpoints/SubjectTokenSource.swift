import Foundation

/// Where workload identity federation reads the token it exchanges (`credential_source` of an
/// `external_account` file): a file another system keeps fresh (a Kubernetes projected token,
/// an OIDC token written by a CI runner), or a URL that serves it (Azure's IMDS, a sidecar).
/// The token is plain text, or a member of a JSON object (`format`).
///
/// Its description names the source; a URL's header values (an `Authorization` one, say) are
/// left out, and its secret query parameters redacted.
public enum SubjectTokenSource: Sendable, Hashable, CustomStringConvertible {
    public enum Format: Sendable, Hashable {
        case text
        /// A JSON object; the token is its member of this name.
        case json(field: String)
    }

    case file(path: String, format: Format)
    case url(URL, headers: [String: String], format: Format)
    /// A program that prints the token (`credential_source.executable`).
    case executable(ExecutableSubjectToken)
    /// AWS: a signed `GetCallerIdentity` request (`credential_source.environment_id: aws1`).
    case aws(AWSSubjectToken)

    public var description: String {
        switch self {
        case .file(let path, _): "file \(path)"
        case .url(let url, let headers, _):
            "URL \(Redaction.url(url.absoluteString))" + (headers.isEmpty ? "" : " with headers \(headers.keys.sorted().joined(separator: ", "))")
        case .executable(let executable): "executable \(executable.command)"
        case .aws: "AWS"
        }
    }

    init(credentialSource source: JSONObject, environment: [String: String]) throws(AuthError) {
        if source["environment_id"]?.stringValue?.hasPrefix("aws") == true {
            self = .aws(try AWSSubjectToken(source, environment: environment))
            return
        }
        if let executable = source["executable"]?.objectValue {
            self = .executable(try ExecutableSubjectToken(executable, environment: environment))
            return
        }
        let format: Format
        switch source["format"]?.objectValue?["type"]?.stringValue ?? "text" {
        case "text": format = .text
        case "json":
            guard let field = source["format"]?.objectValue?["subject_token_field_name"]?.stringValue else {
                throw AuthError(.invalidCredentials, message: "credential_source.format of type json lacks subject_token_field_name")
            }
            format = .json(field: field)
        case let other:
            throw AuthError(.invalidCredentials, message: "credential_source.format type \(other) is not text or json")
        }
        if let path = source["file"]?.stringValue {
            self = .file(path: path, format: format)
        } else if let text = source["url"]?.stringValue, let url = URL(string: text) {
            var headers: [String: String] = [:]
            for (name, value) in source["headers"]?.objectValue ?? [:] { headers[name] = value.stringValue }
            self = .url(url, headers: headers, format: format)
        } else {
            throw AuthError(.invalidCredentials, message: "credential_source has neither file nor url")
        }
    }

    /// Reads the current subject token (URLs through `service`'s pipeline).
    func read(through service: ServiceActor?, for configuration: ExternalAccountAuthorizer.Configuration) async throws(AuthError) -> String {
        let data: Data
        let format: Format
        switch self {
        case .aws(let aws):
            return try await aws.read(audience: configuration.audience, through: service)
        case .executable(let executable):
            let impersonated = try configuration.serviceAccountImpersonationURL.map { url throws(AuthError) in
                try IAMCredentials.parse(impersonationURL: url).account
            }
            return try await executable.read(audience: configuration.audience, tokenType: configuration.subjectTokenType,
                                             impersonatedEmail: impersonated)
        case .file(let path, let fileFormat):
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw AuthError(.invalidCredentials, message: "cannot read the subject token file \(path)")
            }
            data = contents
            format = fileFormat
        case .url(let url, let headers, let urlFormat):
            var request = HTTPRequest(method: .get, url: url)
            request.timeouts = Timeouts(connect: .seconds(10), total: .seconds(30))
            for (name, value) in headers { request.headers[name] = value }
            let response = try await CredentialRequest.send(request, name: "external_account.subject_token", through: service)
            guard (200..<300).contains(response.status) else {
                throw AuthError(.tokenEndpoint, message: "the subject token URL answered \(response.status)", status: response.status)
            }
            data = response.body
            format = urlFormat
        }
        let token: String?
        switch format {
        case .text:
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        case .json(let field):
            token = (try? JSONValue(parsing: data))?.objectValue?[field]?.stringValue
        }
        guard let token, !token.isEmpty else {
            throw AuthError(.invalidCredentials, message: "the subject token source holds no token")
        }
        return token
    }
}
