import COpenSSL
import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`): what workload identity federation from AWS
/// signs its `GetCallerIdentity` request with. Checked against AWS's published test suite
/// (Tests/Conformance/aws-sig-v4-test-suite).
struct AWSSignatureV4: Sendable {
    struct Credentials: Sendable, Hashable {
        var accessKeyID: String
        var secretAccessKey: String
        var sessionToken: String?
    }

    var credentials: Credentials
    var region: String
    var service: String

    /// A request to sign: the path as written (not percent-encoded), the query as sent.
    struct Request: Sendable {
        var method: String
        var path: String
        var query: String
        var headers: [(name: String, value: String)]
        var body: Data
    }

    /// What signing produced, step by step (the test suite checks each).
    struct Signature: Sendable {
        var canonicalRequest: String
        var stringToSign: String
        var authorization: String
    }

    /// Signs `request` at `date`, over `signedHeaders` (lower-case names; all of the request's
    /// headers when nil).
    func sign(_ request: Request, at date: Date, signedHeaders: [String]? = nil) -> Signature {
        let (amzDate, day) = Self.timestamps(date)
        var grouped: [String: [String]] = [:]
        for (name, value) in request.headers {
            grouped[name.lowercased(), default: []].append(Self.trimmed(value))
        }
        let names = (signedHeaders ?? Array(grouped.keys)).map { $0.lowercased() }.filter { grouped[$0] != nil }.sorted()
        let headerLines = names.map { "\($0):\(grouped[$0]?.joined(separator: ",") ?? "")\n" }.joined()
        let signedList = names.joined(separator: ";")
        let canonical = [request.method, Self.canonicalPath(request.path), Self.canonicalQuery(request.query), headerLines, signedList,
                         Self.hex(SHA256.digest(request.body))].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.digest(Data(canonical.utf8)))].joined(separator: "\n")
        var key = Data("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, service, "aws4_request"] { key = Self.hmac(key, Data(part.utf8)) }
        let signature = Self.hex(Self.hmac(key, Data(stringToSign.utf8)))
        return Signature(canonicalRequest: canonical, stringToSign: stringToSign,
                         authorization: "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedList), Signature=\(signature)")
    }

    /// `X-Amz-Date` (`20150830T123600Z`) and the scope's day (`20150830`), in UTC.
    static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { let text = String(value ?? 0); return text.count < 2 ? "0" + text : text }
        let day = "\(parts.year ?? 1970)\(two(parts.month))\(two(parts.day))"
        return ("\(day)T\(two(parts.hour))\(two(parts.minute))\(two(parts.second))Z", day)
    }

    /// Trimmed, with runs of spaces made one (§ canonical headers).
    static func trimmed(_ value: String) -> String {
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
    }

    /// Dot segments removed, runs of slashes made one, each segment percent-encoded once.
    static func canonicalPath(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": _ = segments.popLast()
            default: segments.append(segment)
            }
        }
        let trailing = path.hasSuffix("/") && !segments.isEmpty
        return "/" + segments.map { encode(String($0)) }.joined(separator: "/") + (trailing ? "/" : "")
    }

    /// Pairs decoded, encoded again with the unreserved set only, sorted by name then value.
    static func canonicalQuery(_ query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                encode(String($0).removingPercentEncoding ?? String($0))
            }
            return parts[0] + "=" + (parts.count > 1 ? parts[1] : "")
        }.sorted { lhs, rhs in
            let (left, right) = (lhs.split(separator: "=", maxSplits: 1), rhs.split(separator: "=", maxSplits: 1))
            return left.first == right.first ? lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
                : (left.first ?? "").utf8.lexicographicallyPrecedes((right.first ?? "").utf8)
        }.joined(separator: "&")
    }

    /// RFC 3986 percent-encoding of everything but the unreserved characters, upper-case hex.
    static func encode(_ text: String) -> String {
        URITemplate.percentEncode(text, keep: URITemplate.isUnreserved)
    }

    static func hmac(_ key: Data, _ message: Data) -> Data {
        var mac = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { key in
            message.withUnsafeBytes { message in
                _ = courier_hmac_sha256(key.baseAddress, key.count, message.baseAddress, message.count, &mac)
            }
        }
        return Data(mac)
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef")
        return String(data.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
