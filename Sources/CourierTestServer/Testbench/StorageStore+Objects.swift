import Foundation

/// Objects: metadata, media (uploads three ways, ranged downloads), compose, copy and rewrite.
extension StorageStore {
    func objectRoute(_ request: APIRequest, bucket: String, name: String) -> Route? {
        switch request.method {
        case "GET": return Route(method: "storage.objects.get") { _ in self.getObject(request, bucket: bucket, name: name) }
        case "DELETE":
            return Route(method: "storage.objects.delete") { _ in
                self.withObject(request, bucket: bucket, name: name) { object in
                    object = nil
                    return Self.noContent
                }
            }
        case "PUT", "PATCH":
            return Route(method: request.method == "PUT" ? "storage.objects.update" : "storage.objects.patch") { _ in
                self.withObject(request, bucket: bucket, name: name) { object in
                    guard var updated = object else { return Self.error(404, "No such object") }
                    let body = request.jsonBody ?? [:]
                    if let contentType = body["contentType"] as? String { updated.contentType = contentType }
                    if let metadata = body["metadata"] as? [String: Any] {
                        for (key, value) in metadata { updated.metadata[key] = value as? String }
                    }
                    updated.metageneration += 1
                    object = updated
                    return Self.json(Self.objectResource(updated))
                }
            }
        default: return nil
        }
    }

    /// The object's metadata, or its media with `alt=media` (whole, or a `Range` of it).
    ///
    /// A gzip-stored object (`contentEncoding: gzip`) goes as Cloud Storage sends it (storage-testbench's
    /// `gcs/object.py`): to a client that accepts gzip, the stored bytes with `Content-Encoding:
    /// gzip`, ranges counted in stored bytes; to one that does not, decoded ("decompressive
    /// transcoding"), whole whatever the `Range`, marked `x-guploader-response-body-transformations:
    /// gunzipped`. Either way `x-goog-hash` is the stored bytes'.
    func getObject(_ request: APIRequest, bucket: String, name: String) -> APIResponse {
        guard let object = state.withLock({ $0.buckets[bucket]?.objects[name] }) else {
            return Self.error(404, "No such object: \(bucket)/\(name)")
        }
        if let failed = Self.objectPreconditionFailure(request, existing: object) { return failed }
        // Only the live generation is kept (a bucket without versioning), as `withObject` reads it.
        if let generation = request.parameter("generation").flatMap(Int64.init), generation != object.generation {
            return Self.error(404, "No such object: \(bucket)/\(name)#\(generation)")
        }
        guard request.parameter("alt") == "media" else { return Self.json(Self.objectResource(object)) }
        let transcoding = object.contentEncoding == "gzip" && !(request.header("Accept-Encoding") ?? "").contains("gzip")
        var payload = object.media
        if transcoding {
            guard let decoded = Gzip.decompress(object.media) else { return Self.error(500, "the stored object is not gzip") }
            payload = decoded
        }
        var headers: [(String, String)] = [
            ("Content-Type", object.contentType), ("ETag", Self.etag(object)), ("Accept-Ranges", "bytes"),
            ("x-goog-generation", String(object.generation)), ("x-goog-metageneration", String(object.metageneration)),
            ("x-goog-hash", "crc32c=\(Self.crc32cBase64(object.media)),md5=\(MD5Hasher.hash(data: object.media).base64EncodedString())"),
            ("x-goog-stored-content-length", String(object.media.count)),
        ]
        if let encoding = object.contentEncoding {
            headers.append(("x-goog-stored-content-encoding", encoding))
            if transcoding {
                headers.append(("x-guploader-response-body-transformations", "gunzipped"))
            } else {
                headers.append(("Content-Encoding", encoding))
            }
        }
        if !transcoding, let range = request.header("Range"), range.hasPrefix("bytes=") {
            let bounds = range.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            let count = payload.count
            guard bounds.count == 2, let start = Int(bounds[0]), start >= 0, start < count else {
                return APIResponse(status: 416, headers: [("Content-Range", "bytes */\(count)")])
            }
            let end = bounds[1].isEmpty ? count - 1 : max(start, min(Int(bounds[1]) ?? count - 1, count - 1))
            // `If-Match` is among the JSON API's preconditions; `If-Range` is not, and storage-testbench
            // ignores it: a range of a changed object is the new object's bytes.
            if let validator = request.header("If-Match"), validator != Self.etag(object) {
                return Self.error(412, "The object changed")
            }
            headers.append(("Content-Range", "bytes \(start)-\(end)/\(count)"))
            return APIResponse(status: 206, headers: headers, body: payload.subdata(in: start..<(end + 1)))
        }
        return APIResponse(status: 200, headers: headers, body: payload)
    }

    /// Runs `change` on the object (nil when it does not exist) after its preconditions hold.
    func withObject(_ request: APIRequest, bucket: String, name: String, _ change: (inout Object?) -> APIResponse) -> APIResponse {
        state.withLock { state in
            guard state.buckets[bucket] != nil else { return Self.error(404, "No such bucket: \(bucket)") }
            var object = state.buckets[bucket]!.objects[name]
            guard object != nil else { return Self.error(404, "No such object: \(bucket)/\(name)") }
            if let failed = Self.objectPreconditionFailure(request, existing: object) { return failed }
            if let generation = request.parameter("generation").flatMap(Int64.init), generation != object?.generation {
                return Self.error(404, "No such object: \(bucket)/\(name)#\(generation)")
            }
            let response = change(&object)
            state.buckets[bucket]!.objects[name] = object
            return response
        }
    }

    /// `ifGenerationMatch` (0: the object must not exist) and `ifMetagenerationMatch`: 412 when one fails.
    static func objectPreconditionFailure(_ request: APIRequest, existing: Object?) -> APIResponse? {
        if let expected = request.parameter("ifGenerationMatch").flatMap(Int64.init), expected != (existing?.generation ?? 0) {
            return error(412, "Precondition Failed: generation \(existing?.generation ?? 0), not \(expected)")
        }
        if let expected = request.parameter("ifMetagenerationMatch").flatMap(Int64.init), expected != existing?.metageneration {
            return error(412, "Precondition Failed: metageneration \(existing?.metageneration ?? 0), not \(expected)")
        }
        return nil
    }

    /// Stores a new generation of `object` if the request's preconditions hold on the current one.
    func insert(_ object: Object, preconditions request: APIRequest) -> APIResponse {
        state.withLock { state in
            guard state.buckets[object.bucket] != nil else { return Self.error(404, "No such bucket: \(object.bucket)") }
            if let failed = Self.objectPreconditionFailure(request, existing: state.buckets[object.bucket]!.objects[object.name]) {
                return failed
            }
            var stored = object
            stored.generation = newGeneration(&state)
            state.buckets[object.bucket]!.objects[object.name] = stored
            return Self.json(Self.objectResource(stored))
        }
    }

    func compose(_ request: APIRequest, bucket: String, destination: String) -> APIResponse {
        guard let body = request.jsonBody, let sources = body["sourceObjects"] as? [[String: Any]], !sources.isEmpty else {
            return Self.error(400, "compose needs sourceObjects")
        }
        let parts = state.withLock { state in sources.map { state.buckets[bucket]?.objects[$0["name"] as? String ?? ""] } }
        guard parts.allSatisfy({ $0 != nil }) else { return Self.error(404, "a source object does not exist") }
        let media = parts.reduce(into: Data()) { $0.append($1!.media) }
        let contentType = (body["destination"] as? [String: Any])?["contentType"] as? String ?? parts[0]!.contentType
        return insert(Object(bucket: bucket, name: destination, generation: 0, contentType: contentType, media: media), preconditions: request)
    }

    func copy(_ request: APIRequest, from source: (String, String), to destination: (String, String), rewrite: Bool) -> APIResponse {
        guard let object = state.withLock({ $0.buckets[source.0]?.objects[source.1] }) else {
            return Self.error(404, "No such object: \(source.0)/\(source.1)")
        }
        let copied = Object(bucket: destination.0, name: destination.1, generation: 0, contentType: object.contentType,
                            contentEncoding: object.contentEncoding, metadata: object.metadata, media: object.media)
        let response = insert(copied, preconditions: request)
        guard rewrite, response.status == 200, let resource = try? JSONSerialization.jsonObject(with: response.body) else { return response }
        return Self.json(["kind": "storage#rewriteResponse", "done": true, "totalBytesRewritten": String(object.media.count),
                          "objectSize": String(object.media.count), "resource": resource])
    }
}
