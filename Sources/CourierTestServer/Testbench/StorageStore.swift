import CCourierChecksum
import CourierSync
import Foundation

/// The testbench's Cloud Storage: what each JSON API method of the retry cases needs, in memory.
final class StorageStore: Sendable {
    struct ACLEntry {
        var entity: String
        var role: String
        var version = 1
    }

    struct Notification {
        var id: String
        var topic: String
    }

    struct Bucket {
        var name: String
        var metageneration: Int64 = 1
        var acl: [String: ACLEntry] = [:]
        var defaultObjectACL: [String: ACLEntry] = [:]
        var notifications: [String: Notification] = [:]
        /// The IAM policy's bindings (JSON) and the version its etag names.
        var policyBindings: Any = [Any]()
        var policyVersion = 1
        var retentionLocked = false
        var objects: [String: Object] = [:]
    }

    struct Object {
        var bucket: String
        var name: String
        var generation: Int64
        var metageneration: Int64 = 1
        var contentType: String
        var contentEncoding: String?
        var metadata: [String: String] = [:]
        var media: Data
        var acl: [String: ACLEntry] = [:]
    }

    struct HMACKey {
        var accessID: String
        var serviceAccountEmail: String
        var state = "ACTIVE"
        var version = 1
    }

    struct State {
        var buckets: [String: Bucket] = [:]
        var hmacKeys: [String: HMACKey] = [:]
        var uploads: [String: Upload] = [:]
        var nextGeneration: Int64 = 1_700_000_000_000_000
        var nextID = 1
        var requests: [String: Int] = [:]
        var headers: [String: [[String: String]]] = [:]
    }

    struct Upload {
        var bucket: String
        var name: String
        var contentType: String
        var metadata: [String: String]
        var total: Int?
        var media = Data()
        var complete = false
        var ifGenerationMatch: Int64?
        var object: Object?
    }

    let state = LockedValue(State())

    func record(_ method: String, headers: [(String, String)]) {
        state.withLock {
            $0.requests[method, default: 0] += 1
            $0.headers[method, default: []].append(Dictionary(headers.map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { $1 }))
        }
    }

    func requestCount(_ method: String) -> Int { state.withLock { $0.requests[method] ?? 0 } }
    func seenHeaders(_ method: String) -> [[String: String]] { state.withLock { $0.headers[method] ?? [] } }

    // MARK: JSON

    static func json(_ object: Any, status: Int = 200, headers: [(String, String)] = []) -> APIResponse {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return APIResponse(status: status, headers: [("Content-Type", "application/json; charset=UTF-8")] + headers, body: body)
    }

    static func error(_ status: Int, _ message: String) -> APIResponse {
        json(["error": ["code": status, "message": message, "errors": [["message": message, "domain": "global"]]]], status: status)
    }

    static let noContent = APIResponse(status: 204)

    static func bucketResource(_ bucket: Bucket) -> [String: Any] {
        ["kind": "storage#bucket", "id": bucket.name, "name": bucket.name, "metageneration": String(bucket.metageneration),
         "etag": "CA\(bucket.metageneration)=", "location": "US", "storageClass": "STANDARD",
         "retentionPolicy": ["retentionPeriod": "60", "isLocked": bucket.retentionLocked]]
    }

    static func objectResource(_ object: Object) -> [String: Any] {
        var resource: [String: Any] = [
            "kind": "storage#object", "id": "\(object.bucket)/\(object.name)/\(object.generation)", "bucket": object.bucket,
            "name": object.name, "generation": String(object.generation), "metageneration": String(object.metageneration),
            "size": String(object.media.count), "contentType": object.contentType, "etag": etag(object),
            "md5Hash": MD5Hasher.hash(data: object.media).base64EncodedString(),
            "crc32c": crc32cBase64(object.media),
        ]
        if let encoding = object.contentEncoding { resource["contentEncoding"] = encoding }
        if !object.metadata.isEmpty { resource["metadata"] = object.metadata }
        return resource
    }

    static func etag(_ object: Object) -> String { "\"\(object.generation)-\(object.metageneration)\"" }

    static func crc32cBase64(_ data: Data) -> String {
        let crc = data.withUnsafeBytes { courier_crc32c_update(0, $0.baseAddress, $0.count) }
        return withUnsafeBytes(of: crc.bigEndian) { Data($0) }.base64EncodedString()
    }

    static func aclResource(_ entry: ACLEntry, kind: String, bucket: String, object: String? = nil) -> [String: Any] {
        var resource: [String: Any] = ["kind": kind, "entity": entry.entity, "role": entry.role, "bucket": bucket,
                                       "etag": "CA\(entry.version)="]
        if let object { resource["object"] = object }
        return resource
    }

    static func hmacResource(_ key: HMACKey, project: String) -> [String: Any] {
        ["kind": "storage#hmacKeyMetadata", "accessId": key.accessID, "id": "\(project)/\(key.accessID)", "projectId": project,
         "serviceAccountEmail": key.serviceAccountEmail, "state": key.state, "etag": "hmac-\(key.version)"]
    }

    static func policy(_ bucket: Bucket) -> [String: Any] {
        ["kind": "storage#policy", "resourceId": "projects/_/buckets/\(bucket.name)", "bindings": bucket.policyBindings,
         "etag": policyEtag(bucket), "version": 1]
    }

    /// Base64, as the policy's `etag` is bytes in the Discovery document.
    static func policyEtag(_ bucket: Bucket) -> String {
        Data("policy-\(bucket.policyVersion)".utf8).base64EncodedString()
    }

    func newGeneration(_ state: inout State) -> Int64 {
        state.nextGeneration += 1
        return state.nextGeneration
    }
}
