import ArgumentParser
import Courier
import Foundation
import GoogleStorage

/// `courier sign-url`: a V4 signed URL (or POST policy) for a Cloud Storage object, as
/// `gcloud storage sign-url` makes one, with Application Default Credentials.
public struct SignURLCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sign-url",
        abstract: "Print a V4 signed URL (or POST policy) for a Cloud Storage object.",
        discussion: """
            Credentials are Application Default Credentials. A service account key file signs \
            locally; the metadata server's account (Cloud Run, GKE, Compute Engine) and impersonated \
            credentials sign through IAM Credentials' signBlob, which needs \
            iam.serviceAccounts.signBlob on the account. A user's credentials cannot sign.

            Examples:
              courier sign-url gs://my-bucket/report.pdf --duration 15m
              courier sign-url gs://my-bucket/upload.bin --method PUT --header content-type:application/octet-stream
              courier sign-url gs://my-bucket/photo.jpg --post-policy --field content-type=image/jpeg --max-size 10000000
              courier sign-url gs://my-bucket/photo.jpg --post-policy --html > upload.html
            """
    )

    @Argument(help: "The object, as gs://bucket/object (gs://bucket alone signs the bucket: a listing, say).")
    var target: String

    @Option(help: "How long the URL works: 10m, 1h, 7d at most (as in 10s, 2m, 1h; d for days).")
    var duration: String = "1h"

    @Option(help: "GET (the default), PUT, POST, DELETE, HEAD, or RESUMABLE for a resumable upload's start.")
    var method: String = "GET"

    @Option(name: .customLong("header"), help: "A header the request must carry, signed: name:value (repeatable).")
    var headers: [String] = []

    @Option(name: .customLong("query"), help: "A query parameter the URL carries, signed: name=value (repeatable).")
    var queryParameters: [String] = []

    @Option(help: "path (the default), virtual (bucket.storage.googleapis.com) or a host name that serves the bucket.")
    var style: String = "path"

    @Option(help: "The host the URL names instead of Cloud Storage's (an emulator: http://localhost:9000).")
    var endpoint: String?

    @Option(help: "Where IAM Credentials is, for signBlob (default: https://iamcredentials.googleapis.com).")
    var iamEndpoint: String?

    @Flag(help: "Print a POST policy's URL and form fields (JSON) for an HTML form upload instead.")
    var postPolicy = false

    @Flag(help: "With --post-policy: print the HTML form (hidden fields, then the file input) instead of JSON.")
    var html = false

    @Option(name: .customLong("field"), help: "With --post-policy: a form field with its value, signed: name=value (repeatable).")
    var fields: [String] = []

    @Option(help: "With --post-policy: the largest file the form may upload, in bytes.")
    var maxSize: Int64?

    public init() {}

    static func pair(_ text: String, separator: Character, option: String) throws -> (String, String) {
        guard let index = text.firstIndex(of: separator), index != text.startIndex else {
            throw ValidationError("\(option) \"\(text)\" is not name\(separator)value")
        }
        return (String(text[..<index]), String(text[text.index(after: index)...]))
    }

    static func location(_ target: String) throws -> (bucket: String, object: String?) {
        guard target.hasPrefix("gs://") else { throw ValidationError("\(target) is not gs://bucket/object") }
        let rest = target.dropFirst("gs://".count)
        guard let slash = rest.firstIndex(of: "/") else {
            guard !rest.isEmpty else { throw ValidationError("\(target) names no bucket") }
            return (String(rest), nil)
        }
        let object = String(rest[rest.index(after: slash)...])
        return (String(rest[..<slash]), object.isEmpty ? nil : object)
    }

    func expiration() throws -> Duration {
        if duration.hasSuffix("d"), let days = Int64(duration.dropLast()), days >= 0, days <= 36500 { return .seconds(days * 86400) }
        return try DurationParsing.require(duration, "--duration")
    }

    func urlStyle() -> StorageURLStyle {
        switch style {
        case "path": .pathStyle
        case "virtual": .virtualHostedStyle
        default: .bucketBoundHostname(style)
        }
    }

    public func run() async throws {
        if html && !postPolicy { throw ValidationError("--html goes with --post-policy") }
        let (bucket, object) = try Self.location(target)
        let expiration = try expiration()
        var headerValues: [String: String] = [:]
        for header in headers {
            let (name, value) = try Self.pair(header, separator: ":", option: "--header")
            headerValues[name] = value.trimmingCharacters(in: .whitespaces)
        }
        var query: [String: String] = [:]
        for parameter in queryParameters {
            let (name, value) = try Self.pair(parameter, separator: "=", option: "--query")
            query[name] = value
        }
        var formFields: [String: String] = [:]
        for field in fields {
            let (name, value) = try Self.pair(field, separator: "=", option: "--field")
            formFields[name] = value
        }
        let iam = try iamEndpoint.map { text in
            guard let url = URL(string: text), url.scheme != nil else { throw ValidationError("--iam-endpoint \(text) is not a URL") }
            return url
        } ?? ImpersonatedAuthorizer.googleIAMEndpoint
        let authorizer = try ApplicationDefaultCredentials.authorizer(scopes: ["https://www.googleapis.com/auth/cloud-platform"])
        let signer = try BlobSigners.signer(for: authorizer, iamEndpoint: iam)
        var configuration = ServiceActor.Configuration()
        configuration.auth.authorizer = authorizer
        let output = try await withService(configuration: configuration) { service -> String in
            if postPolicy {
                guard let object else { throw ValidationError("--post-policy needs gs://bucket/object") }
                var conditions: [PostPolicyCondition] = []
                if let maxSize {
                    guard maxSize >= 0 else { throw ValidationError("--max-size must not be negative") }
                    conditions.append(.contentLengthRange(0...maxSize))
                }
                let policy = try await StorageSigning.postPolicy(
                    bucket: bucket, object: object,
                    options: PostPolicyOptions(expiration: expiration, fields: formFields, conditions: conditions, style: urlStyle(),
                                               endpoint: endpoint),
                    signer: signer, through: service)
                if html { return policy.htmlForm() }
                let json = try JSONSerialization.data(withJSONObject: ["url": policy.url.absoluteString, "fields": policy.fields],
                                                      options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                return String(decoding: json, as: UTF8.self)
            }
            var options = SignedURLOptions(method: method, expiration: expiration, headers: headerValues, queryParameters: query,
                                           style: urlStyle(), endpoint: endpoint)
            if method.uppercased() == "RESUMABLE" {
                options.method = "POST"
                options.headers["x-goog-resumable"] = "start"
            }
            return try await StorageSigning.signedURL(bucket: bucket, object: object, options: options, signer: signer,
                                                      through: service).absoluteString
        }
        print(output)
    }
}
