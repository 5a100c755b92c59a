import Foundation

/// The JSON API's routes: which method a request is (the conformance file's names), and its answer.
extension StorageStore {
    /// A request's method and what answers it; nil for a path that is no method.
    struct Route {
        var method: String
        var run: @Sendable (UploadFaults?) -> APIResponse
    }

    /// What an upload needs to inject `return-503-after-256K`: the test and its registry.
    struct UploadFaults {
        var registry: RetryTestRegistry
        var testID: String
    }

    func route(_ request: APIRequest, baseURL: String) -> Route? {
        let segments = request.rawPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { $0.removingPercentEncoding ?? String($0) }
        let verb = request.method
        if segments.starts(with: ["upload", "storage", "v1", "b"]), segments.count == 6, segments[5] == "o" {
            let bucket = segments[4]
            return Route(method: "storage.objects.insert") { faults in
                self.upload(request, bucket: bucket, faults: faults, baseURL: baseURL)
            }
        }
        if segments.starts(with: ["download", "storage", "v1", "b"]), segments.count == 7, segments[5] == "o", verb == "GET" {
            let (bucket, name) = (segments[4], segments[6])
            return Route(method: "storage.objects.get") { _ in self.getObject(request, bucket: bucket, name: name) }
        }
        guard segments.starts(with: ["storage", "v1"]) else { return nil }
        let path = Array(segments.dropFirst(2))
        switch (verb, path.count, path.first ?? "") {
        // Buckets.
        case ("GET", 1, "b"): return Route(method: "storage.buckets.list") { _ in self.listBuckets() }
        case ("POST", 1, "b"): return Route(method: "storage.buckets.insert") { _ in self.insertBucket(request) }
        case (_, 2, "b"): return bucketRoute(request, bucket: path[1])
        case ("GET", 3, "b") where path[2] == "iam":
            return Route(method: "storage.buckets.getIamPolicy") { _ in self.withBucket(path[1]) { Self.json(Self.policy($0)) } }
        case ("PUT", 3, "b") where path[2] == "iam":
            return Route(method: "storage.buckets.setIamPolicy") { _ in self.setPolicy(request, bucket: path[1]) }
        case ("GET", 4, "b") where path[2] == "iam" && path[3] == "testPermissions":
            return Route(method: "storage.buckets.testIamPermissions") { _ in
                Self.json(["kind": "storage#testIamPermissionsResponse", "permissions": request.parameters("permissions")])
            }
        case ("POST", 3, "b") where path[2] == "lockRetentionPolicy":
            return Route(method: "storage.buckets.lockRetentionPolicy") { _ in self.lockRetention(request, bucket: path[1]) }
        // Bucket and default object ACLs, notifications.
        case (_, 3, "b") where path[2] == "acl" || path[2] == "defaultObjectAcl":
            return aclCollectionRoute(request, bucket: path[1], object: nil, kind: path[2])
        case (_, 4, "b") where path[2] == "acl" || path[2] == "defaultObjectAcl":
            return aclEntryRoute(request, bucket: path[1], object: nil, kind: path[2], entity: path[3])
        case ("GET", 3, "b") where path[2] == "notificationConfigs":
            return Route(method: "storage.notifications.list") { _ in
                self.withBucket(path[1]) { bucket in
                    Self.json(["kind": "storage#notifications", "items": bucket.notifications.values.sorted { $0.id < $1.id }
                        .map { Self.notificationResource($0) }])
                }
            }
        case ("POST", 3, "b") where path[2] == "notificationConfigs":
            return Route(method: "storage.notifications.insert") { _ in self.insertNotification(request, bucket: path[1]) }
        case (_, 4, "b") where path[2] == "notificationConfigs":
            return notificationRoute(verb, bucket: path[1], id: path[3])
        // Objects.
        case ("GET", 3, "b") where path[2] == "o":
            return Route(method: "storage.objects.list") { _ in
                self.withBucket(path[1]) { bucket in
                    Self.json(["kind": "storage#objects", "items": bucket.objects.values.sorted { $0.name < $1.name }.map(Self.objectResource)])
                }
            }
        case (_, 4, "b") where path[2] == "o": return objectRoute(request, bucket: path[1], name: path[3])
        case ("POST", 5, "b") where path[2] == "o" && path[4] == "compose":
            return Route(method: "storage.objects.compose") { _ in self.compose(request, bucket: path[1], destination: path[3]) }
        case (_, 5, "b") where path[2] == "o" && path[4] == "acl":
            return aclCollectionRoute(request, bucket: path[1], object: path[3], kind: "acl")
        case (_, 6, "b") where path[2] == "o" && path[4] == "acl":
            return aclEntryRoute(request, bucket: path[1], object: path[3], kind: "acl", entity: path[5])
        case ("POST", 9, "b") where path[2] == "o" && (path[4] == "copyTo" || path[4] == "rewriteTo") && path[5] == "b" && path[7] == "o":
            return Route(method: path[4] == "copyTo" ? "storage.objects.copy" : "storage.objects.rewrite") { _ in
                self.copy(request, from: (path[1], path[3]), to: (path[6], path[8]), rewrite: path[4] == "rewriteTo")
            }
        // Projects.
        case ("GET", 3, "projects") where path[2] == "serviceAccount":
            return Route(method: "storage.serviceaccount.get") { _ in
                Self.json(["kind": "storage#serviceAccount", "email_address": "service-\(path[1])@gs-project-accounts.iam.gserviceaccount.com"])
            }
        case (_, 3, "projects") where path[2] == "hmacKeys":
            return hmacCollectionRoute(request, project: path[1])
        case (_, 4, "projects") where path[2] == "hmacKeys":
            return hmacKeyRoute(request, project: path[1], accessID: path[3])
        default:
            return nil
        }
    }

    // MARK: Buckets

    private func listBuckets() -> APIResponse {
        let items = state.withLock { $0.buckets.values.sorted { $0.name < $1.name }.map(Self.bucketResource) }
        return Self.json(["kind": "storage#buckets", "items": items])
    }

    private func insertBucket(_ request: APIRequest) -> APIResponse {
        guard let body = request.jsonBody, let name = body["name"] as? String, !name.isEmpty else {
            return Self.error(400, "a bucket needs a name")
        }
        return state.withLock { state in
            guard state.buckets[name] == nil else { return Self.error(409, "The bucket \(name) already exists.") }
            state.buckets[name] = Bucket(name: name)
            return Self.json(Self.bucketResource(state.buckets[name]!))
        }
    }

    private func bucketRoute(_ request: APIRequest, bucket name: String) -> Route? {
        switch request.method {
        case "GET": return Route(method: "storage.buckets.get") { _ in self.withBucket(name) { Self.json(Self.bucketResource($0)) } }
        case "DELETE":
            return Route(method: "storage.buckets.delete") { _ in
                self.state.withLock { state in
                    guard let bucket = state.buckets[name] else { return Self.error(404, "No such bucket: \(name)") }
                    if let failed = Self.metagenerationFailure(request, bucket.metageneration) { return failed }
                    state.buckets[name] = nil
                    return Self.noContent
                }
            }
        case "PUT", "PATCH":
            return Route(method: request.method == "PUT" ? "storage.buckets.update" : "storage.buckets.patch") { _ in
                self.mutateBucket(name, request: request) { bucket in
                    bucket.metageneration += 1
                    return Self.json(Self.bucketResource(bucket))
                }
            }
        default: return nil
        }
    }

    private func setPolicy(_ request: APIRequest, bucket name: String) -> APIResponse {
        guard let body = request.jsonBody else { return Self.error(400, "a policy is JSON") }
        return state.withLock { state in
            guard var bucket = state.buckets[name] else { return Self.error(404, "No such bucket: \(name)") }
            if let etag = body["etag"] as? String, etag != Self.policyEtag(bucket) {
                return Self.error(412, "The policy's etag does not match")
            }
            bucket.policyBindings = body["bindings"] ?? [Any]()
            bucket.policyVersion += 1
            state.buckets[name] = bucket
            return Self.json(Self.policy(bucket))
        }
    }

    private func lockRetention(_ request: APIRequest, bucket name: String) -> APIResponse {
        guard request.parameter("ifMetagenerationMatch") != nil else {
            return Self.error(400, "lockRetentionPolicy requires ifMetagenerationMatch")
        }
        return mutateBucket(name, request: request) { bucket in
            bucket.retentionLocked = true
            return Self.json(Self.bucketResource(bucket))
        }
    }

    func withBucket(_ name: String, _ body: (Bucket) -> APIResponse) -> APIResponse {
        guard let bucket = state.withLock({ $0.buckets[name] }) else { return Self.error(404, "No such bucket: \(name)") }
        return body(bucket)
    }

    private func mutateBucket(_ name: String, request: APIRequest, _ change: (inout Bucket) -> APIResponse) -> APIResponse {
        state.withLock { state in
            guard var bucket = state.buckets[name] else { return Self.error(404, "No such bucket: \(name)") }
            if let failed = Self.metagenerationFailure(request, bucket.metageneration) { return failed }
            let response = change(&bucket)
            state.buckets[name] = bucket
            return response
        }
    }

    static func metagenerationFailure(_ request: APIRequest, _ metageneration: Int64) -> APIResponse? {
        if let expected = request.parameter("ifMetagenerationMatch").flatMap(Int64.init), expected != metageneration {
            return error(412, "Precondition Failed: metageneration \(metageneration), not \(expected)")
        }
        return nil
    }

    // MARK: ACLs

    /// `b/{bucket}/acl`, `b/{bucket}/defaultObjectAcl` or `b/{bucket}/o/{object}/acl`: list and insert.
    private func aclCollectionRoute(_ request: APIRequest, bucket: String, object: String?, kind: String) -> Route? {
        let family = Self.aclFamily(kind: kind, object: object)
        switch request.method {
        case "GET":
            return Route(method: "storage.\(family.method).list") { _ in
                self.withACL(bucket: bucket, object: object, kind: kind) { entries in
                    Self.json(["kind": family.kind + "s", "items": entries.values.sorted { $0.entity < $1.entity }.map {
                        Self.aclResource($0, kind: family.kind, bucket: bucket, object: object)
                    }])
                }
            }
        case "POST":
            return Route(method: "storage.\(family.method).insert") { _ in
                guard let body = request.jsonBody, let entity = body["entity"] as? String, let role = body["role"] as? String else {
                    return Self.error(400, "an ACL entry needs an entity and a role")
                }
                return self.withACL(bucket: bucket, object: object, kind: kind) { entries in
                    entries[entity] = ACLEntry(entity: entity, role: role, version: (entries[entity]?.version ?? 0) + 1)
                    return Self.json(Self.aclResource(entries[entity]!, kind: family.kind, bucket: bucket, object: object))
                }
            }
        default: return nil
        }
    }

    /// One ACL entry: get, update, patch, delete.
    private func aclEntryRoute(_ request: APIRequest, bucket: String, object: String?, kind: String, entity: String) -> Route? {
        let family = Self.aclFamily(kind: kind, object: object)
        let name: String
        switch request.method {
        case "GET": name = "get"
        case "PUT": name = "update"
        case "PATCH": name = "patch"
        case "DELETE": name = "delete"
        default: return nil
        }
        return Route(method: "storage.\(family.method).\(name)") { _ in
            self.withACL(bucket: bucket, object: object, kind: kind) { entries in
                guard var entry = entries[entity] else { return Self.error(404, "No ACL entry for \(entity)") }
                switch name {
                case "delete":
                    entries[entity] = nil
                    return Self.noContent
                case "update", "patch":
                    if let role = request.jsonBody?["role"] as? String { entry.role = role }
                    entry.version += 1
                    entries[entity] = entry
                default:
                    break
                }
                return Self.json(Self.aclResource(entry, kind: family.kind, bucket: bucket, object: object))
            }
        }
    }

    private static func aclFamily(kind: String, object: String?) -> (method: String, kind: String) {
        if object != nil { return ("object_acl", "storage#objectAccessControl") }
        return kind == "acl" ? ("bucket_acl", "storage#bucketAccessControl") : ("default_object_acl", "storage#objectAccessControl")
    }

    private func withACL(bucket name: String, object: String?, kind: String,
                         _ body: (inout [String: ACLEntry]) -> APIResponse) -> APIResponse {
        state.withLock { state in
            guard var bucket = state.buckets[name] else { return Self.error(404, "No such bucket: \(name)") }
            let response: APIResponse
            if let object {
                guard var stored = bucket.objects[object] else { return Self.error(404, "No such object: \(name)/\(object)") }
                response = body(&stored.acl)
                bucket.objects[object] = stored
            } else if kind == "acl" {
                response = body(&bucket.acl)
            } else {
                response = body(&bucket.defaultObjectACL)
            }
            state.buckets[name] = bucket
            return response
        }
    }

    // MARK: Notifications

    static func notificationResource(_ notification: Notification) -> [String: Any] {
        ["kind": "storage#notification", "id": notification.id, "topic": notification.topic, "payload_format": "JSON_API_V1",
         "etag": notification.id]
    }

    private func insertNotification(_ request: APIRequest, bucket name: String) -> APIResponse {
        guard let topic = request.jsonBody?["topic"] as? String else { return Self.error(400, "a notification needs a topic") }
        return state.withLock { state in
            guard state.buckets[name] != nil else { return Self.error(404, "No such bucket: \(name)") }
            state.nextID += 1
            let notification = Notification(id: String(state.nextID), topic: topic)
            state.buckets[name]!.notifications[notification.id] = notification
            return Self.json(Self.notificationResource(notification))
        }
    }

    private func notificationRoute(_ verb: String, bucket name: String, id: String) -> Route? {
        guard verb == "GET" || verb == "DELETE" else { return nil }
        return Route(method: verb == "GET" ? "storage.notifications.get" : "storage.notifications.delete") { _ in
            self.state.withLock { state in
                guard let notification = state.buckets[name]?.notifications[id] else { return Self.error(404, "No such notification: \(id)") }
                if verb == "DELETE" {
                    state.buckets[name]!.notifications[id] = nil
                    return Self.noContent
                }
                return Self.json(Self.notificationResource(notification))
            }
        }
    }

    // MARK: HMAC keys

    private func hmacCollectionRoute(_ request: APIRequest, project: String) -> Route? {
        switch request.method {
        case "GET":
            return Route(method: "storage.hmacKey.list") { _ in
                let keys = self.state.withLock { $0.hmacKeys.values.sorted { $0.accessID < $1.accessID } }
                return Self.json(["kind": "storage#hmacKeysMetadata", "items": keys.map { Self.hmacResource($0, project: project) }])
            }
        case "POST":
            return Route(method: "storage.hmacKey.create") { _ in
                guard let email = request.parameter("serviceAccountEmail") else { return Self.error(400, "serviceAccountEmail is required") }
                let key = self.state.withLock { state -> HMACKey in
                    state.nextID += 1
                    let key = HMACKey(accessID: "GOOG\(state.nextID)", serviceAccountEmail: email)
                    state.hmacKeys[key.accessID] = key
                    return key
                }
                return Self.json(["kind": "storage#hmacKey", "metadata": Self.hmacResource(key, project: project),
                                  "secret": "s3kr1t-test-hmac-\(key.accessID)"])
            }
        default: return nil
        }
    }

    private func hmacKeyRoute(_ request: APIRequest, project: String, accessID: String) -> Route? {
        let name: String
        switch request.method {
        case "GET": name = "get"
        case "PUT": name = "update"
        case "DELETE": name = "delete"
        default: return nil
        }
        return Route(method: "storage.hmacKey.\(name)") { _ in
            self.state.withLock { state in
                guard var key = state.hmacKeys[accessID] else { return Self.error(404, "No such HMAC key: \(accessID)") }
                switch name {
                case "delete":
                    state.hmacKeys[accessID] = nil
                    return Self.noContent
                case "update":
                    let body = request.jsonBody ?? [:]
                    if let etag = body["etag"] as? String, etag != "hmac-\(key.version)" {
                        return Self.error(412, "The HMAC key's etag does not match")
                    }
                    if let newState = body["state"] as? String { key.state = newState }
                    key.version += 1
                    state.hmacKeys[accessID] = key
                default:
                    break
                }
                return Self.json(Self.hmacResource(key, project: project))
            }
        }
    }
}

extension APIRequest {
    /// The body as a JSON object, if it is one.
    var jsonBody: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }

    /// Every value of a repeated parameter.
    func parameters(_ name: String) -> [String] {
        query.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            return parts.first == name && parts.count > 1 ? parts[1] : nil
        }
    }
}
