// Written by hand (not generated): V4 signed POST policies, for HTML form uploads.
import Courier
import COpenSSL
import Foundation

/// A condition the uploaded form must meet, besides the fields' exact values.
public enum PostPolicyCondition: Sendable, Hashable {
    /// The file's size in bytes lies in `range` (`content-length-range`).
    case contentLengthRange(ClosedRange<Int64>)
    /// The form field (`$key`, `$Content-Type`, `$acl` …, with the `$`) starts with `prefix`;
    /// an empty prefix allows any value.
    case startsWith(field: String, prefix: String)
    /// The form field has exactly this value.
    case matches(field: String, value: String)
}

/// What a signed POST policy allows: one form upload to a bucket until it expires.
public struct PostPolicyOptions: Sendable {
    /// How long the policy works, from ``date``: at most 7 days.
    public var expiration: Duration
    /// Fields the form carries with these values (`content-type`, `success_action_redirect`,
    /// `success_action_status`, `x-goog-meta-*`, `acl` …): each is also a condition.
    public var fields: [String: String]
    public var conditions: [PostPolicyCondition]
    public var style: StorageURLStyle
    /// `https` (the default) or `http`.
    public var scheme: String?
    /// The host the form posts to instead of Cloud Storage's (see ``SignedURLOptions/endpoint``).
    public var endpoint: String?
    /// The universe the default host belongs to; nil: the signing service's, else `googleapis.com`
    /// (see ``SignedURLOptions/universeDomain``).
    public var universeDomain: String?
    /// When the policy starts to work; now when nil.
    public var date: Date?

    public init(expiration: Duration = .seconds(3600), fields: [String: String] = [:], conditions: [PostPolicyCondition] = [],
                style: StorageURLStyle = .pathStyle, scheme: String? = nil, endpoint: String? = nil,
                universeDomain: String? = nil, date: Date? = nil) {
        self.expiration = expiration
        self.fields = fields
        self.conditions = conditions
        self.style = style
        self.scheme = scheme
        self.endpoint = endpoint
        self.universeDomain = universeDomain
        self.date = date
    }
}

/// A signed POST policy: an HTML form posts `fields` (each an `<input type="hidden">`), then
/// the file as the last field named `file`, to `url` as `multipart/form-data`.
public struct SignedPostPolicy: Sendable, Hashable {
    public let url: URL
    /// Every field the form must carry: `key`, `policy`, `x-goog-algorithm`, `x-goog-credential`,
    /// `x-goog-date`, `x-goog-signature` and the options' own fields.
    public let fields: [String: String]
}

extension StorageSigning {
    /// A policy that lets a browser upload `object` to `bucket` with an HTML form, within
    /// `options.conditions`, without other credentials until it expires.
    public static func postPolicy(bucket: String, object: String, options: PostPolicyOptions,
                                  signer: any BlobSigner, through service: ServiceActor? = nil) async throws -> SignedPostPolicy {
        let account = try await account(of: signer, through: service)
        var options = options
        options.universeDomain = options.universeDomain ?? service?.universeDomain
        let policy = try V4PostPolicy(bucket: bucket, object: object, options: options, account: account,
                                      environment: ProcessInfo.processInfo.environment)
        let signature = try await sign(policy.encoded, with: signer, through: service)
        guard let url = URL(string: policy.url) else { throw SignedURLError("invalidOption", "the options do not make a URL") }
        var fields = policy.fields
        fields["x-goog-signature"] = signature
        return SignedPostPolicy(url: url, fields: fields)
    }
}

/// A POST policy before its signature: the JSON document, its base64 (what is signed) and the fields.
struct V4PostPolicy {
    let url: String
    let document: String
    let encoded: String
    let fields: [String: String]

    init(bucket: String, object: String, options: PostPolicyOptions, account: String, environment: [String: String]) throws {
        guard options.expiration.components.seconds >= 1, options.expiration <= StorageSigning.maximumExpiration else {
            throw SignedURLError("expirationTooLong",
                                 "a V4 policy lives at most 7 days (604800 s), not \(options.expiration.components.seconds) s")
        }
        guard !bucket.isEmpty else { throw SignedURLError("invalidOption", "the bucket name is empty") }
        let date = options.date ?? Date()
        let hostOptions = SignedURLOptions(style: options.style, scheme: options.scheme, endpoint: options.endpoint,
                                           universeDomain: options.universeDomain)
        let host = try V4Host(options: hostOptions, bucket: bucket, environment: environment)
        url = "\(host.scheme)://\(host.authority)\(host.bucketInHost ? "/" : "/" + V4SignedURL.escape(bucket) + "/")"

        let stamp = V4Stamp(date)
        let credential = "\(account)/\(stamp.day)/auto/storage/goog4_request"
        // The order Google's libraries write: conditions, the options' fields by name, then the
        // bucket, the key and the signature's own fields.
        var conditions = options.conditions.map { condition -> String in
            switch condition {
            case .contentLengthRange(let range): "[\"content-length-range\",\(range.lowerBound),\(range.upperBound)]"
            case .startsWith(let field, let prefix): "[\"starts-with\",\(JSONText.string(field)),\(JSONText.string(prefix))]"
            case .matches(let field, let value): "[\"eq\",\(JSONText.string(field)),\(JSONText.string(value))]"
            }
        }
        let named = options.fields.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
        var pairs = named.map { ($0.key, $0.value) }
        pairs += [("bucket", bucket), ("key", object), ("x-goog-date", stamp.timestamp), ("x-goog-credential", credential),
                  ("x-goog-algorithm", StorageSigning.algorithm)]
        conditions += pairs.map { "{\(JSONText.string($0.0)):\(JSONText.string($0.1))}" }
        let expires = V4Stamp.rfc3339(date.addingTimeInterval(TimeInterval(options.expiration.components.seconds)))
        document = "{\"conditions\":[\(conditions.joined(separator: ","))],\"expiration\":\(JSONText.string(expires))}"
        encoded = Data(document.utf8).base64EncodedString()

        var fields = options.fields
        fields["key"] = object
        fields["x-goog-date"] = stamp.timestamp
        fields["x-goog-credential"] = credential
        fields["x-goog-algorithm"] = StorageSigning.algorithm
        fields["policy"] = encoded
        self.fields = fields
    }
}

/// JSON text as Google's libraries write a policy: compact, every character past ASCII as `\uXXXX`.
enum JSONText {
    static func string(_ text: String) -> String {
        var out = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20...0x7E: out.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: unit))) // in 0x20...0x7E
            default: out += String(format: "\\u%04x", unit)
            }
        }
        return out + "\""
    }
}

/// SHA-256 by the libcrypto Courier links.
enum SHA256 {
    static func hex(_ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        data.withUnsafeBytes { _ = courier_sha256($0.baseAddress, $0.count, &digest) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}
