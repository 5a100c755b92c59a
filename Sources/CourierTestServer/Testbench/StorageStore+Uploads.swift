import Foundation

/// `objects.insert`: multipart, media and resumable uploads, with storage-testbench's
/// `return-<status>-after-<N>K` fault (the upload keeps N KiB, then the request fails).
extension StorageStore {
    func upload(_ request: APIRequest, bucket: String, faults: UploadFaults?, baseURL: String) -> APIResponse {
        if let uploadID = request.parameter("upload_id") { return chunk(request, uploadID: uploadID, faults: faults) }
        switch request.parameter("uploadType") {
        case "resumable" where request.method == "POST":
            return initiate(request, bucket: bucket, baseURL: baseURL)
        case "media" where request.method == "POST":
            guard let name = request.parameter("name") else { return Self.error(400, "a media upload needs ?name=") }
            let object = Object(bucket: bucket, name: name, generation: 0,
                                contentType: request.header("Content-Type") ?? "application/octet-stream",
                                contentEncoding: request.parameter("contentEncoding"), media: request.body)
            return singleShot(object, request: request, faults: faults)
        case "multipart" where request.method == "POST":
            guard let (metadata, media, mediaType) = Self.multipart(request) else { return Self.error(400, "not a multipart/related upload") }
            guard let name = metadata["name"] as? String ?? request.parameter("name") else { return Self.error(400, "the object has no name") }
            let object = Object(bucket: bucket, name: name, generation: 0, contentType: metadata["contentType"] as? String ?? mediaType,
                                contentEncoding: metadata["contentEncoding"] as? String,
                                metadata: (metadata["metadata"] as? [String: String]) ?? [:], media: media)
            return singleShot(object, request: request, faults: faults)
        default:
            return Self.error(400, "uploadType must be multipart, media or resumable")
        }
    }

    /// A multipart or media upload: the after-bytes fault applies once the body reaches N KiB.
    private func singleShot(_ object: Object, request: APIRequest, faults: UploadFaults?) -> APIResponse {
        if let faults, let next = faults.registry.peek(faults.testID, method: "storage.objects.insert"),
           case .statusAfterBytes(let status, let bytes) = RetryInstruction(next), object.media.count >= bytes {
            faults.registry.dequeue(faults.testID, method: "storage.objects.insert")
            return Self.error(status, "Fault injected during a single-shot upload")
        }
        return insert(object, preconditions: request)
    }

    private func initiate(_ request: APIRequest, bucket: String, baseURL: String) -> APIResponse {
        let metadata = request.jsonBody ?? [:]
        guard let name = request.parameter("name") ?? metadata["name"] as? String else { return Self.error(400, "the object has no name") }
        return state.withLock { state in
            guard state.buckets[bucket] != nil else { return Self.error(404, "No such bucket: \(bucket)") }
            state.nextID += 1
            let id = "upload-\(state.nextID)"
            state.uploads[id] = Upload(bucket: bucket, name: name,
                                       contentType: request.header("X-Upload-Content-Type") ?? metadata["contentType"] as? String
                                           ?? "application/octet-stream",
                                       metadata: (metadata["metadata"] as? [String: String]) ?? [:],
                                       total: request.header("X-Upload-Content-Length").flatMap(Int.init),
                                       ifGenerationMatch: request.parameter("ifGenerationMatch").flatMap(Int64.init))
            let location = "\(baseURL)/upload/storage/v1/b/\(bucket)/o?uploadType=resumable&upload_id=\(id)"
            return APIResponse(status: 200, headers: [("Location", location), ("Content-Length", "0")])
        }
    }

    /// A chunk (`Content-Range: bytes a-b/total`) or a status query (`bytes */total`).
    private func chunk(_ request: APIRequest, uploadID: String, faults: UploadFaults?) -> APIResponse {
        guard var upload = state.withLock({ $0.uploads[uploadID] }) else { return Self.error(404, "No such upload: \(uploadID)") }
        if upload.complete, let object = upload.object { return Self.json(Self.objectResource(object)) }
        guard let range = request.header("Content-Range"), range.hasPrefix("bytes ") else {
            return Self.error(400, "a chunk needs Content-Range")
        }
        let parts = range.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return Self.error(400, "invalid Content-Range \(range)") }
        if parts[1] != "*" {
            guard let total = Int(parts[1]) else { return Self.error(400, "invalid Content-Range \(range)") }
            upload.total = total
        }
        if parts[0] != "*" {
            let bounds = parts[0].split(separator: "-")
            guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first >= 0, last >= first - 1,
                  last < Int.max, last - first + 1 == request.body.count, first <= upload.media.count
            else { return Self.error(400, "invalid Content-Range \(range) for \(request.body.count) bytes") }
            var data = request.body
            if let faults, let next = faults.registry.peek(faults.testID, method: "storage.objects.insert"),
               case .statusAfterBytes(let status, let bytes) = RetryInstruction(next) {
                // As the emulator does: keep the chunk's bytes up to the limit, then fail.
                if bytes > upload.media.count, bytes <= last + 1 {
                    upload.media.append(data.subdata(in: (upload.media.count - first)..<(bytes - first)))
                }
                if upload.media.count >= bytes {
                    faults.registry.dequeue(faults.testID, method: "storage.objects.insert")
                    state.withLock { $0.uploads[uploadID] = upload }
                    return Self.error(status, "Fault injected during a resumable upload")
                }
            }
            // Bytes the server already holds are ignored, as Cloud Storage does.
            if first < upload.media.count { data = data.subdata(in: (upload.media.count - first)..<data.count) }
            upload.media.append(data)
        }
        if let total = upload.total, total == upload.media.count {
            var preconditions = request
            preconditions.query = upload.ifGenerationMatch.map { "ifGenerationMatch=\($0)" } ?? ""
            let response = insert(Object(bucket: upload.bucket, name: upload.name, generation: 0, contentType: upload.contentType,
                                         metadata: upload.metadata, media: upload.media), preconditions: preconditions)
            if response.status == 200 {
                upload.complete = true
                upload.object = state.withLock { $0.buckets[upload.bucket]?.objects[upload.name] }
            }
            state.withLock { $0.uploads[uploadID] = upload }
            return response
        }
        state.withLock { $0.uploads[uploadID] = upload }
        let headers = upload.media.isEmpty ? [] : [("Range", "bytes=0-\(upload.media.count - 1)")]
        return APIResponse(status: 308, headers: headers + [("Content-Length", "0")])
    }

    /// Whether the resumable upload `uploadID` holds all its bytes and made its object.
    func isUploadComplete(_ uploadID: String) -> Bool {
        state.withLock { $0.uploads[uploadID]?.complete ?? false }
    }

    /// Whether `request` meets storage-testbench's `stall-for-Ns-after-NK` on an upload: a
    /// resumable chunk whose bytes cross the limit, or a single-shot upload that reaches it.
    func uploadStalls(_ request: APIRequest, after limit: Int) -> Bool {
        guard let uploadID = request.parameter("upload_id") else {
            return request.method == "POST" && request.parameter("uploadType") != "resumable" && request.body.count >= limit
        }
        guard let held = state.withLock({ $0.uploads[uploadID]?.media.count }) else { return false }
        return held <= limit && held + request.body.count > limit
    }

    /// A `multipart/related` body's metadata (JSON), media and the media part's type.
    static func multipart(_ request: APIRequest) -> ([String: Any], Data, String)? {
        guard let type = request.header("Content-Type"), let boundaryRange = type.range(of: "boundary=") else { return nil }
        let boundary = String(type[boundaryRange.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [Data] = []
        var cursor = request.body.startIndex
        while let found = request.body.range(of: delimiter, in: cursor..<request.body.endIndex) {
            if cursor != request.body.startIndex { parts.append(request.body.subdata(in: cursor..<found.lowerBound)) }
            cursor = found.upperBound
        }
        let pieces = parts.compactMap { part -> (headers: String, body: Data)? in
            guard let split = part.range(of: Data("\r\n\r\n".utf8)) else { return nil }
            var body = part.subdata(in: split.upperBound..<part.endIndex)
            if body.suffix(2) == Data("\r\n".utf8) { body.removeLast(2) }
            return (String(decoding: part.subdata(in: part.startIndex..<split.lowerBound), as: UTF8.self), body)
        }
        guard pieces.count == 2, let metadata = try? JSONSerialization.jsonObject(with: pieces[0].body) as? [String: Any] else { return nil }
        let mediaType = pieces[1].headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-type:") }
            .map { String($0.dropFirst("content-type:".count)).trimmingCharacters(in: .whitespaces) } ?? "application/octet-stream"
        return (metadata, pieces[1].body, mediaType)
    }
}
