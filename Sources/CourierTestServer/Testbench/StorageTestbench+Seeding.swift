import Foundation

/// Resources a test makes before its retry test starts, without going through the API (as
/// google-cloud-go's runner makes them with a client of its own).
extension StorageTestbench {
    /// A bucket named `name`, with an ACL entry and a default object ACL entry for `entity`.
    public func createBucket(_ name: String, entity: String = "user-test@example.com") {
        store.state.withLock { state in
            var bucket = StorageStore.Bucket(name: name)
            bucket.acl[entity] = StorageStore.ACLEntry(entity: entity, role: "READER")
            bucket.defaultObjectACL[entity] = StorageStore.ACLEntry(entity: entity, role: "READER")
            state.buckets[name] = bucket
        }
    }

    /// An object with `contents`, and an ACL entry for `entity`; its generation.
    @discardableResult
    public func createObject(bucket: String, name: String, contents: Data, contentType: String = "application/octet-stream",
                             contentEncoding: String? = nil, entity: String = "user-test@example.com") -> Int64 {
        store.state.withLock { state in
            var object = StorageStore.Object(bucket: bucket, name: name, generation: store.newGeneration(&state),
                                             contentType: contentType, contentEncoding: contentEncoding, media: contents)
            object.acl[entity] = StorageStore.ACLEntry(entity: entity, role: "READER")
            state.buckets[bucket]?.objects[name] = object
            return object.generation
        }
    }

    /// A notification configuration on `bucket`; its ID.
    public func createNotification(bucket: String) -> String {
        store.state.withLock { state in
            state.nextID += 1
            let id = String(state.nextID)
            state.buckets[bucket]?.notifications[id] = StorageStore.Notification(id: id, topic: "projects/p/topics/t")
            return id
        }
    }

    /// An HMAC key for `serviceAccountEmail`; its access ID.
    public func createHMACKey(serviceAccountEmail: String = "sa@example.com") -> String {
        store.state.withLock { state in
            state.nextID += 1
            let key = StorageStore.HMACKey(accessID: "GOOG\(state.nextID)", serviceAccountEmail: serviceAccountEmail)
            state.hmacKeys[key.accessID] = key
            return key.accessID
        }
    }

    /// The object's bytes, if it exists.
    public func contents(bucket: String, name: String) -> Data? {
        store.state.withLock { $0.buckets[bucket]?.objects[name]?.media }
    }

    /// The current etag of the bucket's IAM policy.
    public func policyEtag(bucket: String) -> String? {
        store.state.withLock { $0.buckets[bucket].map(StorageStore.policyEtag) }
    }

    /// The current etag of an HMAC key.
    public func hmacEtag(accessID: String) -> String? {
        store.state.withLock { $0.hmacKeys[accessID].map { "hmac-\($0.version)" } }
    }
}
