// Written by hand (not generated): V4 signed URLs, as Cloud Storage defines them.
import Courier
import Foundation

/// Where a signed URL or POST policy points: the bucket in the path, in the host name, or a
/// host name that is the bucket (a CNAME to `c.storage.googleapis.com`, or a load balancer).
public enum StorageURLStyle: Sendable, Hashable {
    /// `https://storage.googleapis.com/bucket/object`.
    case pathStyle
    /// `https://bucket.storage.googleapis.com/object`.
    case virtualHostedStyle
    /// `https://hostname/object`: `hostname` serves the bucket.
    case bucketBoundHostname(String)
}

/// What a V4 signed URL allows: one method on one object (or bucket) until it expires.
public struct SignedURLOptions: Sendable {
    /// `GET`, `PUT`, `POST`, `DELETE` or `HEAD`. A resumable upload's start is `POST` with
    /// `x-goog-resumable: start` among the ``headers`` (``resumableUpload(expiration:)``).
    public var method: String
    /// How long the URL works, from ``date``: at most 7 days.
    public var expiration: Duration
    /// Headers the request must carry, with these values: they are signed (`Content-Type`,
    /// `x-goog-meta-*`, `x-goog-encryption-*`, `x-goog-resumable` …). `X-Goog-Content-SHA256`
    /// signs the payload's hash instead of `UNSIGNED-PAYLOAD`.
    public var headers: [String: String]
    /// Query parameters the URL carries, signed too (`response-content-disposition`, `generation` …).
    public var queryParameters: [String: String]
    public var style: StorageURLStyle
    /// `https` (the default) or `http`.
    public var scheme: String?
    /// The host (and port) the URL names, instead of Cloud Storage's: an emulator, a private
    /// endpoint. It may carry a scheme (`http://localhost:9000`), used when ``scheme`` is nil.
    public var endpoint: String?
    /// The universe the default host belongs to: `storage.<universeDomain>`. nil: the universe
    /// of the service the URL is signed through (``ServiceActor/universeDomain``), else `googleapis.com`.
    public var universeDomain: String?
    /// When the URL starts to work; now when nil.
    public var date: Date?

    public init(method: String = "GET", expiration: Duration = .seconds(3600), headers: [String: String] = [:],
                queryParameters: [String: String] = [:], style: StorageURLStyle = .pathStyle, scheme: String? = nil,
                endpoint: String? = nil, universeDomain: String? = nil, date: Date? = nil) {
        self.method = method
        self.expiration = expiration
        self.headers = headers
        self.queryParameters = queryParameters
        self.style = style
        self.scheme = scheme
        self.endpoint = endpoint
        self.universeDomain = universeDomain
        self.date = date
    }

    /// The start of a resumable upload: `POST` with `x-goog-resumable: start`. The session URL
    /// the server answers with takes the chunks without further signing.
    public static func resumableUpload(expiration: Duration = .seconds(3600)) -> SignedURLOptions {
        SignedURLOptions(method: "POST", expiration: expiration, headers: ["x-goog-resumable": "start"])
    }
}

/// Signing failed before anything was signed; credentials never appear in it.
public struct SignedURLError: CourierError, Hashable {
    /// `expirationTooLong`, `invalidMethod`, `invalidOption` or `cannotSign`.
    public let kind: String
    public let message: String
    public let underlyingError: (any Error)?

    init(_ kind: String, _ message: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        underlyingError = underlying
    }

    /// The expiration is over 7 days (604,800 s) or under 1 s.
    public static let expirationTooLong = SignedURLError("expirationTooLong", "")
    /// A method Cloud Storage does not sign.
    public static let invalidMethod = SignedURLError("invalidMethod", "")
    /// A bucket, host, scheme or header that cannot make a URL.
    public static let invalidOption = SignedURLError("invalidOption", "")
    /// The credentials can neither sign nor call `signBlob` (a user's, a bearer token).
    public static let cannotSign = SignedURLError("cannotSign", "")
}

/// Cloud Storage's V4 signatures (`GOOG4-RSA-SHA256`): signed URLs and signed POST policies.
///
/// ```swift
/// let signer = try BlobSigners.signer(for: try await ApplicationDefaultCredentials.authorizer(scopes: []))
/// let url = try await StorageSigning.signedURL(bucket: "my-bucket", object: "report.pdf",
///                                             options: SignedURLOptions(expiration: .seconds(900)), signer: signer)
/// ```
///
/// The result is byte for byte what Google's client libraries make, checked against Google's
/// conformance cases (`v4_signatures.json`). A ``BlobSigner`` without a key signs through IAM
/// Credentials' `signBlob`, a request that takes `service`'s pipeline.
public enum StorageSigning {
    /// The longest a V4 signature lives: 7 days.
    public static let maximumExpiration: Duration = .seconds(604_800)
    static let methods: Set<String> = ["GET", "PUT", "POST", "DELETE", "HEAD"]
    static let algorithm = "GOOG4-RSA-SHA256"

    /// A URL that performs `options.method` on `object` in `bucket` (on the bucket when `object`
    /// is nil) without other credentials until it expires.
    public static func signedURL(bucket: String, object: String?, options: SignedURLOptions,
                                 signer: any BlobSigner, through service: ServiceActor? = nil) async throws -> URL {
        let account = try await account(of: signer, through: service)
        var options = options
        options.universeDomain = options.universeDomain ?? service?.universeDomain
        let request = try V4SignedURL(bucket: bucket, object: object, options: options, account: account,
                                      environment: ProcessInfo.processInfo.environment)
        let signature = try await sign(request.stringToSign, with: signer, through: service)
        guard let url = URL(string: request.url(signature: signature)) else {
            throw SignedURLError("invalidOption", "the options do not make a URL")
        }
        return url
    }

    static func account(of signer: any BlobSigner, through service: ServiceActor?) async throws -> String {
        do { return try await signer.signingAccount(through: service) } catch let error as AuthError where error == .unsupportedCredentials {
            throw SignedURLError("cannotSign", error.message, underlying: error)
        }
    }

    static func sign(_ text: String, with signer: any BlobSigner, through service: ServiceActor?) async throws -> String {
        try await signer.sign(Data(text.utf8), through: service).map { String(format: "%02x", $0) }.joined()
    }
}

/// The parts of a V4 signed URL, before and after the signature: pure, so the conformance
/// cases check the canonical request and the string to sign too.
struct V4SignedURL {
    let scheme: String
    /// `host[:port]` as the URL names it; the signed `host` header drops the port.
    let authority: String
    let path: String
    let canonicalQuery: String
    let canonicalRequest: String
    let stringToSign: String

    init(bucket: String, object: String?, options: SignedURLOptions, account: String, environment: [String: String]) throws {
        let method = options.method.uppercased()
        guard StorageSigning.methods.contains(method) else {
            throw SignedURLError("invalidMethod", "Cloud Storage signs GET, PUT, POST, DELETE and HEAD, not \(options.method)")
        }
        let seconds = options.expiration.components.seconds
        // Whole seconds are signed: under one would sign `X-Goog-Expires=0`, a URL expired at once.
        guard seconds >= 1, options.expiration <= StorageSigning.maximumExpiration else {
            throw SignedURLError("expirationTooLong", "a V4 signature lives at most 7 days (604800 s), not \(seconds) s")
        }
        guard !bucket.isEmpty else { throw SignedURLError("invalidOption", "the bucket name is empty") }
        let date = options.date ?? Date()
        let host = try V4Host(options: options, bucket: bucket, environment: environment)
        scheme = host.scheme
        authority = host.authority
        path = host.path(bucket: bucket, object: object)

        let stamp = V4Stamp(date)
        let scope = "\(stamp.day)/auto/storage/goog4_request"
        var headers: [String: String] = [:]
        for (name, value) in options.headers {
            let lowered = name.lowercased()
            // What a header line can carry (RFC 9110 §5.5): no control character but a tab in a
            // value; a name of visible ASCII without a colon. (Not only RFC 9110's token
            // characters: Google's conformance cases sign `header/name/with/slash`.) Anything
            // else would sign a request that can never be sent.
            guard !lowered.isEmpty, lowered != "host", name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
                throw SignedURLError("invalidOption", "the header name \(name.debugDescription) cannot be signed: visible ASCII without a colon, and not host")
            }
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw SignedURLError("invalidOption", "the value of header \(lowered) holds a control character HTTP cannot carry")
            }
            headers[lowered] = V4SignedURL.canonicalValue(value)
        }
        headers["host"] = host.hostname
        let names = headers.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let signedHeaders = names.joined(separator: ";")

        var query = options.queryParameters
        query["X-Goog-Algorithm"] = StorageSigning.algorithm
        query["X-Goog-Credential"] = "\(account)/\(scope)"
        query["X-Goog-Date"] = stamp.timestamp
        query["X-Goog-Expires"] = String(seconds)
        query["X-Goog-SignedHeaders"] = signedHeaders
        canonicalQuery = query.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            .map { "\(V4SignedURL.escape($0.key))=\(V4SignedURL.escape($0.value))" }
            .joined(separator: "&")

        let payload = headers["x-goog-content-sha256"] ?? "UNSIGNED-PAYLOAD"
        canonicalRequest = [method, path, canonicalQuery, names.map { "\($0):\(headers[$0] ?? "")" }.joined(separator: "\n") + "\n",
                            signedHeaders, payload].joined(separator: "\n")
        stringToSign = [StorageSigning.algorithm, stamp.timestamp, scope, SHA256.hex(Data(canonicalRequest.utf8))]
            .joined(separator: "\n")
    }

    func url(signature: String) -> String {
        "\(scheme)://\(authority)\(path)?\(canonicalQuery)&X-Goog-Signature=\(signature)"
    }

    /// A header value as V4 signs it: trimmed, each run of spaces and tabs one space.
    static func canonicalValue(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// Every byte but the unreserved ones (`A–Z a–z 0–9 - _ . ~`) as `%XX`, a space too.
    static func escape(_ text: String) -> String {
        URITemplate.percentEncode(text, keep: URITemplate.isUnreserved)
    }

    /// A path whose segments are escaped and whose slashes stay.
    static func escapePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { escape(String($0)) }.joined(separator: "/")
    }
}

/// The host, scheme and path a signature names, from the options and the environment.
struct V4Host {
    let scheme: String
    let authority: String
    /// The authority without its port: the signed `host` header.
    let hostname: String
    let bucketInHost: Bool

    /// Precedence as Google's libraries have it: a bucket-bound host name, then
    /// `options.endpoint`, then `STORAGE_EMULATOR_HOST`, then `storage.<universe domain>`.
    init(options: SignedURLOptions, bucket: String, environment: [String: String]) throws {
        var scheme = options.scheme
        var base: String
        switch options.style {
        case .bucketBoundHostname(let name):
            base = name
        case .pathStyle, .virtualHostedStyle:
            if let endpoint = options.endpoint ?? environment["STORAGE_EMULATOR_HOST"].flatMap({ $0.isEmpty ? nil : $0 }) {
                base = endpoint
            } else {
                base = "storage.\(options.universeDomain ?? UniverseDomain.googleDefault)"
            }
        }
        if let range = base.range(of: "://") {
            let named = base[..<range.lowerBound].lowercased()
            if scheme == nil { scheme = named }
            base = String(base[range.upperBound...])
        }
        if let slash = base.firstIndex(of: "/") { base = String(base[..<slash]) }
        let chosen = (scheme ?? "https").lowercased()
        guard chosen == "https" || chosen == "http" else {
            throw SignedURLError("invalidOption", "a signed URL is https or http, not \(chosen)")
        }
        guard !base.isEmpty, base.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "@" && $0 != "?" && $0 != "#" }) else {
            throw SignedURLError("invalidOption", "the host \(base) cannot make a URL")
        }
        if case .virtualHostedStyle = options.style {
            guard bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }) else {
                throw SignedURLError("invalidOption", "the bucket \(bucket) cannot be a host name")
            }
            base = "\(bucket).\(base)"
        }
        self.scheme = chosen
        authority = base
        hostname = V4Host.dropPort(base)
        if case .pathStyle = options.style { bucketInHost = false } else { bucketInHost = true }
    }

    func path(bucket: String, object: String?) -> String {
        var path = bucketInHost ? "" : "/" + bucket
        if let object { path += "/" + object }
        return V4SignedURL.escapePath(path.isEmpty ? "/" : path)
    }

    static func dropPort(_ authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") { return String(authority[...close]) }
        guard let colon = authority.lastIndex(of: ":") else { return authority }
        return String(authority[..<colon])
    }
}

/// A V4 signature's time: `20190201T090000Z` and its day `20190201`, in UTC.
struct V4Stamp {
    let timestamp: String
    let day: String
    /// `2019-02-01T09:00:10Z`, for a POST policy's expiration.
    static func rfc3339(_ date: Date) -> String { Date.ISO8601FormatStyle().format(date) }

    init(_ date: Date) {
        let parts = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        day = String(format: "%04d%02d%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        timestamp = day + String(format: "T%02d%02d%02dZ", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }
}

extension Calendar {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()
}
