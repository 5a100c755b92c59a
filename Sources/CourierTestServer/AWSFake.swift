import COpenSSL
import CourierSync
import Foundation
import HTTPTypes
import Hummingbird

/// AWS as workload identity federation meets it: the EC2 metadata service with IMDSv2 under
/// `/aws/latest/` (a session token from `PUT api/token`, then required on every read: the
/// availability zone, the role name, the role's keys), and the check AWS makes of a signed
/// `GetCallerIdentity` request, which Google's STS relies on (``verify(_:audience:)``, written
/// apart from Courier's signer).
public final class AWSFake: Sendable {
    /// Keys the fake knows: the role's (with their session token) and any registered.
    public struct Keys: Sendable, Hashable {
        public var accessKeyID: String
        public var secretAccessKey: String
        public var sessionToken: String?
        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String?) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }
    }

    struct State {
        var zone = "us-east-2b"
        var role = "courier-test-role"
        var roleKeys = Keys(accessKeyID: "ASIAROLE0EXAMPLE", secretAccessKey: "ROLE-SECRET-s3kr1t-\(UUID().uuidString.prefix(8))",
                            sessionToken: "ROLE-SESSION-s3kr1t-\(UUID().uuidString.prefix(8))")
        var registered: [String: Keys] = [:]
        var sessionTokens: Set<String> = []
        var sessionTokenRequests = 0
        var metadataReads = 0
        var refusedReads = 0
        var verified = 0
        var lastSignedHeaders: [String] = []
    }

    private let state = LockedValue(State())

    init() {}

    /// The keys the metadata service hands out for its role.
    public var roleKeys: Keys { state.withLock { $0.roleKeys } }
    /// The region the metadata service's zone is in.
    public var region: String { state.withLock { String($0.zone.dropLast()) } }
    public var sessionTokenRequests: Int { state.withLock { $0.sessionTokenRequests } }
    /// Metadata reads answered (with a valid session token).
    public var metadataReads: Int { state.withLock { $0.metadataReads } }
    /// Metadata reads refused for lack of a session token.
    public var refusedReads: Int { state.withLock { $0.refusedReads } }
    /// Signed requests verified.
    public var verifiedCount: Int { state.withLock { $0.verified } }
    /// The headers the last verified request signed.
    public var lastSignedHeaders: [String] { state.withLock { $0.lastSignedHeaders } }

    /// Keys that are not the role's (a user's, from the environment).
    public func register(_ keys: Keys) {
        state.withLock { $0.registered[keys.accessKeyID] = keys }
    }

    func add(to router: Router<BasicRequestContext>) {
        router.put("/aws/latest/api/token") { request, _ in
            guard let ttl = request.headers[HTTPField.Name("X-aws-ec2-metadata-token-ttl-seconds")!].flatMap(Int.init), (1...21600).contains(ttl) else {
                return Response(status: .badRequest)
            }
            let token = self.state.withLock { state -> String in
                state.sessionTokenRequests += 1
                let token = "imds-s3kr1t-\(UUID().uuidString.prefix(12))"
                state.sessionTokens.insert(token)
                return token
            }
            return Self.text(token)
        }
        router.get("/aws/latest/meta-data/placement/availability-zone") { request, _ in self.read(request) { $0.zone } }
        router.get("/aws/latest/meta-data/iam/security-credentials") { request, _ in self.read(request) { $0.role } }
        router.get("/aws/latest/meta-data/iam/security-credentials/:role") { request, context in
            let role = context.parameters.get("role")
            return self.read(request) { state in
                guard role == state.role else { return nil }
                let keys = state.roleKeys
                return #"{"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": "\#(keys.accessKeyID)", "SecretAccessKey": "\#(keys.secretAccessKey)", "Token": "\#(keys.sessionToken ?? "")", "Expiration": "2099-01-01T00:00:00Z"}"#
            }
        }
    }

    /// IMDSv2: no read without a session token this service issued.
    private func read(_ request: Request, _ answer: (State) -> String?) -> Response {
        let token = request.headers[HTTPField.Name("X-aws-ec2-metadata-token")!]
        let body = state.withLock { state -> String?? in
            guard let token, state.sessionTokens.contains(token) else {
                state.refusedReads += 1
                return .none
            }
            state.metadataReads += 1
            return .some(answer(state))
        }
        switch body {
        case .none: return Response(status: .unauthorized)
        case .some(nil): return Response(status: .notFound)
        case .some(let text?): return Self.text(text)
        }
    }

    private static func text(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// Whether `subjectToken` (Google's serialization of a signed `GetCallerIdentity` request)
    /// is signed by keys this fake knows, for `audience`, within 15 minutes, as AWS checks it.
    func verify(_ subjectToken: String, audience: String) -> Bool {
        guard let json = subjectToken.removingPercentEncoding, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              object["method"] as? String == "POST", let url = (object["url"] as? String).flatMap(URLComponents.init(string:)),
              let list = object["headers"] as? [[String: String]]
        else { return false }
        var headers: [String: String] = [:]
        for entry in list { if let key = entry["key"]?.lowercased(), let value = entry["value"] { headers[key] = value } }
        guard let authorization = headers["authorization"],
              let credential = authorization.firstMatch(of: /Credential=([^\/]+)\/(\d{8})\/([^\/]+)\/([^\/]+)\/aws4_request/),
              let signed = authorization.firstMatch(of: /SignedHeaders=([a-z0-9;-]+)/)?.1.split(separator: ";").map(String.init),
              let signature = authorization.firstMatch(of: /Signature=([0-9a-f]{64})/)?.1,
              url.host == "sts.\(credential.3).amazonaws.com" || url.host == "127.0.0.1",
              credential.4 == "sts", ["host", "x-amz-date", "x-goog-cloud-target-resource"].allSatisfy(signed.contains),
              headers["x-goog-cloud-target-resource"] == audience, let date = headers["x-amz-date"], date.hasPrefix(credential.2),
              let signedAt = Self.amzDate(date), abs(signedAt.timeIntervalSinceNow) < 900
        else { return false }
        let keys = state.withLock { state in state.roleKeys.accessKeyID == String(credential.1) ? state.roleKeys : state.registered[String(credential.1)] }
        guard let keys, headers["x-amz-security-token"] == keys.sessionToken else { return false }
        // The canonical request of a body-less POST (AWS Signature Version 4), recomputed here.
        let query = (url.percentEncodedQuery ?? "").split(separator: "&").map(String.init).sorted().joined(separator: "&")
        let lines = signed.map { name in "\(name):\((headers[name] ?? "").split(separator: " ").joined(separator: " "))\n" }.joined()
        let canonical = "POST\n\(url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath)\n\(query)\n\(lines)\n\(signed.joined(separator: ";"))\n\(Self.hex(Self.sha256(Data())))"
        let scope = "\(credential.2)/\(credential.3)/\(credential.4)/aws4_request"
        let toSign = "AWS4-HMAC-SHA256\n\(date)\n\(scope)\n\(Self.hex(Self.sha256(Data(canonical.utf8))))"
        var key = Data("AWS4\(keys.secretAccessKey)".utf8)
        for part in [String(credential.2), String(credential.3), String(credential.4), "aws4_request"] { key = Self.hmac(key, Data(part.utf8)) }
        guard Self.hex(Self.hmac(key, Data(toSign.utf8))) == String(signature) else { return false }
        state.withLock { state in
            state.verified += 1
            state.lastSignedHeaders = signed
        }
        return true
    }

    private static func amzDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.date(from: text)
    }

    private static func sha256(_ data: Data) -> Data {
        var digest = [UInt8](repeating: 0, count: 32)
        data.withUnsafeBytes { _ = courier_sha256($0.baseAddress, $0.count, &digest) }
        return Data(digest)
    }

    private static func hmac(_ key: Data, _ message: Data) -> Data {
        var mac = [UInt8](repeating: 0, count: 32)
        key.withUnsafeBytes { key in message.withUnsafeBytes { _ = courier_hmac_sha256(key.baseAddress, key.count, $0.baseAddress, $0.count, &mac) } }
        return Data(mac)
    }

    private static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}
