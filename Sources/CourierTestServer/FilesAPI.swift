import CourierSync
import CCourierChecksum
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// A Cloud-Storage-like files API for upload and download tests, storing bytes on disk:
///
/// - `POST /upload/files/v1/files?uploadType=resumable&name=N`: a session (`Location`);
///   `PUT` chunks with `Content-Range: bytes a-b/total` (308 + `Range`, then 200 + the file),
///   status queries with `bytes */total` (Google's behaviour: 308 with what it has; it never
///   finalizes early). Faults, as initiation parameters: `partial=N` keeps at most N bytes of
///   each chunk; `fail=K:S` answers the K-th chunk with status S; `expire=K` forgets the session
///   after K chunks (404); `drop=B` resets the connection of the first chunk after B bytes (the
///   session URI is then on the raw fault listener).
///   A chunk may say `bytes a-b/*` while the size is unknown; `bytes */total` with every byte
///   received completes the upload.
/// - `POST …?uploadType=multipart` (`multipart/related`) and `…?uploadType=media`; `cut=N` stores
///   the file and cuts the answer's JSON to N bytes.
///   `sink=1` keeps and hashes nothing, for benchmarks of the protocol itself.
/// - Integrity, as Cloud Storage: an `X-Goog-Hash` on the request that completes an upload (and a
///   multipart upload's metadata `md5Hash`/`crc32c`) must match the bytes received, else 400
///   `Provided … doesn't match calculated …` and nothing is stored. `corrupt=N` flips byte N as it
///   arrives, the way a bad link would.
/// - `GET /files/v1/files/{id}`: the file's metadata, with `md5Hash` and `crc32c`.
/// - `GET /download/files/v1/files/{id}?alt=media`: the bytes, with `Range` (`bytes=a-` and
///   `bytes=a-b`), `If-Range`, `If-Match`, `ETag` and the whole object's `x-goog-hash`. Faults:
///   `corrupt=N` flips byte N of every response that carries it; `break=N` drops the connection
///   at byte N, once per file and N (later requests go through).
public final class FilesAPI: Sendable {
    struct Faults {
        var partial: Int64?
        var failChunk: (index: Int, status: Int)?
        var expireAfter: Int?
        var dropAfter: Int64?
        /// Flip this byte (absolute offset) as it arrives.
        var corrupt: Int64?
    }

    struct Session {
        var path: URL
        var received: Int64 = 0
        var total: Int64?
        var name: String
        var contentType: String
        var metadata: [String: String]
        var faults: Faults
        var chunks = 0
        var failed = false
        var dropped = false
        /// `sink=1`: count the bytes and keep nothing (benchmarks of the protocol itself).
        var sink = false
        /// Hashed as bytes arrive (always in order), so finishing needs no second pass.
        var md5 = LockedMD5()
        var crc: UInt32 = 0
    }

    /// The hasher is not `Sendable`; this one lives in the state lock and is only used under it.
    struct LockedMD5: @unchecked Sendable {
        var hasher = MD5Hasher()
    }

    struct StoredFile {
        var path: URL
        var name: String
        var size: Int64
        var contentType: String
        var md5: String
        var crc32c: String
        var generation: Int
        var metadata: [String: String]
    }

    struct State {
        var sessions: [String: Session] = [:]
        var files: [String: StoredFile] = [:]
        var nextID = 0
        /// Names whose uploads already had their fault: a retry or restart goes through.
        var faulted: Set<String> = []
        /// Downloads already broken at a byte (`id@N`).
        var brokenDownloads: Set<String> = []
        var statusQueries = 0
        var chunkRequests = 0
        /// Every chunk's and status query's `Content-Range`, in order.
        var contentRanges: [String] = []
    }

    private let state = LockedValue(State())
    let directory: URL
    private let dropBase = LockedValue("")
    private let mainBase = LockedValue("")

    init() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-files-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func setBaseURLs(main: String, drop: String) {
        mainBase.withLock { $0 = main }
        dropBase.withLock { $0 = drop }
    }

    /// Status queries received, all sessions together.
    public var statusQueryCount: Int { state.withLock { $0.statusQueries } }
    /// Downloads cut short by a `break=N` fault so far.
    public var brokenDownloadCount: Int { state.withLock { $0.brokenDownloads.count } }
    /// Every `Content-Range` of a chunk or status query received, in order.
    public var contentRanges: [String] { state.withLock { $0.contentRanges } }
    /// Chunk requests (with data) received.
    public var chunkRequestCount: Int { state.withLock { $0.chunkRequests } }
    /// Bytes the server holds for an upload session that has not finished.
    public func receivedBytes(uploadID: String) -> Int64? { state.withLock { $0.sessions[uploadID]?.received } }
    /// The stored bytes of a finished upload, by name.
    public func contents(named name: String) -> Data? {
        let path = state.withLock { $0.files.values.first { $0.name == name }?.path }
        return path.flatMap { try? Data(contentsOf: $0) }
    }
    /// The server's MD5 (base64) and CRC32C (base64, big-endian) of a stored file, by name.
    public func checksums(named name: String) -> (md5: String, crc32c: String)? {
        state.withLock { $0.files.values.first { $0.name == name }.map { ($0.md5, $0.crc32c) } }
    }

    /// Stores a file directly, for download tests.
    public func store(name: String, contents: Data, contentType: String = "application/octet-stream") throws {
        let path = directory.appendingPathComponent("stored-\(UUID().uuidString)")
        try contents.write(to: path)
        try finalize(path: path, name: name, contentType: contentType, metadata: [:])
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Routes

    func add(to router: Router<BasicRequestContext>) {
        router.post("/upload/files/v1/files") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 64 << 20)
            return try self.begin(APIRequest(request, body: body)).hummingbirdResponse // a ClientNumberError answers 400
        }
        router.put("/upload/files/v1/files") { request, _ in
            var request = request
            let id = request.uri.queryParameters.get("upload_id")
            if let id, self.state.withLock({ $0.sessions[id]?.sink == true }) {
                // A benchmark's chunks (up to 128 MiB) are counted as they arrive, like /discard.
                var count = 0
                for try await buffer in request.body { count += buffer.readableBytes }
                return self.chunk(APIRequest(request, body: ByteBuffer()), sinkCount: count).hummingbirdResponse
            }
            let body = try await request.collectBody(upTo: 256 << 20)
            return self.chunk(APIRequest(request, body: body)).hummingbirdResponse
        }
        router.get("/files/v1/files/{id}") { request, context in
            let id = try context.parameters.require("id")
            guard let file = self.state.withLock({ $0.files[id] }) else {
                return NotesAPI.error(404, "notFound", "No such file: \(id)").hummingbirdResponse
            }
            return NotesAPI.json(Self.object(id: id, file: file)).hummingbirdResponse
        }
        router.get("/download/files/v1/files/{id}") { request, context in
            try self.download(request, id: try context.parameters.require("id"))
        }
    }

    // MARK: Uploads

    private func begin(_ request: APIRequest) throws(ClientNumberError) -> APIResponse {
        let name = request.parameter("name") ?? "unnamed-\(UUID().uuidString.prefix(8))"
        switch request.parameter("uploadType") {
        case "resumable":
            let declaredTotal = try ClientNumber.parse(request.header("X-Upload-Content-Length"), "X-Upload-Content-Length",
                                                       in: ClientNumber.nonNegative).map(Int64.init)
            var faults = Faults()
            faults.partial = try ClientNumber.parse(request.parameter("partial"), "partial", in: ClientNumber.nonNegative).map(Int64.init)
            if let fail = request.parameter("fail")?.split(separator: ":"), fail.count == 2, let index = Int(fail[0]) {
                faults.failChunk = (index, try ClientNumber.require(fail[1], "fail's status", in: ClientNumber.status))
            }
            faults.expireAfter = request.parameter("expire").flatMap { Int($0) }
            faults.dropAfter = try ClientNumber.parse(request.parameter("drop"), "drop", in: ClientNumber.nonNegative).map(Int64.init)
            faults.corrupt = request.parameter("corrupt").flatMap { Int64($0) }
            if state.withLock({ !$0.faulted.insert(name).inserted }) { faults = Faults() } // each fault strikes once per name
            let body = (try? JSONSerialization.jsonObject(with: request.body) as? [String: Any]) ?? [:]
            let metadata = body["metadata"] as? [String: String] ?? [:]
            let sink = request.parameter("sink") == "1"
            let (id, path) = state.withLock { state -> (String, URL) in
                state.nextID += 1
                // Carries the secret mark: a session URI is a bearer credential, and the suite's secret
                // scan must fail if one ever reaches a log.
                let id = "upload-\(state.nextID)-s3kr1t-\(UUID().uuidString.prefix(6))"
                let path = directory.appendingPathComponent(id)
                var session = Session(path: path, total: declaredTotal,
                                      name: name, contentType: request.header("X-Upload-Content-Type") ?? "application/octet-stream",
                                      metadata: metadata, faults: faults)
                session.sink = sink
                state.sessions[id] = session
                return (id, path)
            }
            _ = FileManager.default.createFile(atPath: path.path, contents: nil)
            let base = faults.dropAfter == nil ? mainBase.withLock { $0 } : dropBase.withLock { $0 }
            return APIResponse(status: 200, headers: [("Location", "\(base)/upload/files/v1/files?uploadType=resumable&upload_id=\(id)")])
        case "media":
            return Self.cutting(storeWhole(Self.corrupting(request.body, at: request.parameter("corrupt"), offset: 0), name: name,
                                           contentType: request.header("Content-Type") ?? "application/octet-stream", metadata: [:],
                                           expected: Self.expectedHashes(request.header("X-Goog-Hash"), metadata: [:])),
                                at: request.parameter("cut"))
        case "multipart":
            guard let contentType = request.header("Content-Type"), let boundary = contentType.components(separatedBy: "boundary=").last else {
                return NotesAPI.error(400, "badRequest", "multipart/related needs a boundary")
            }
            let pieces = Self.relatedParts(request.body, boundary: boundary)
            guard pieces.count == 2 else { return NotesAPI.error(400, "badRequest", "multipart/related needs metadata and media") }
            let metadata = (try? JSONSerialization.jsonObject(with: pieces[0].body) as? [String: Any]) ?? [:]
            return Self.cutting(storeWhole(Self.corrupting(pieces[1].body, at: request.parameter("corrupt"), offset: 0),
                              name: metadata["name"] as? String ?? name, contentType: pieces[1].contentType,
                              metadata: metadata["metadata"] as? [String: String] ?? [:],
                              expected: Self.expectedHashes(request.header("X-Goog-Hash"), metadata: metadata)), at: request.parameter("cut"))
        default:
            return NotesAPI.error(400, "badRequest", "uploadType must be resumable, multipart or media")
        }
    }

    /// `cut=N` on a single-shot upload: the file is stored, and its 200 carries only the first N
    /// bytes of its JSON, as a link that breaks off the answer would leave it.
    static func cutting(_ answer: APIResponse, at parameter: String?) -> APIResponse {
        guard let limit = parameter.flatMap({ Int($0) }), limit >= 0, answer.status == 200 else { return answer }
        var cut = answer
        cut.body = answer.body.prefix(limit)
        return cut
    }

    private func storeWhole(_ body: Data, name: String, contentType: String, metadata: [String: String],
                            expected: [(String, String)]) -> APIResponse {
        var md5 = MD5Hasher()
        md5.update(data: body)
        let crc = body.withUnsafeBytes { courier_crc32c_update(0, $0.baseAddress, $0.count) }
        if let refusal = Self.refusal(expected, md5: md5.finalize(), crc32c: crc) { return refusal }
        let path = directory.appendingPathComponent("whole-\(UUID().uuidString)")
        do {
            try body.write(to: path)
            let (id, file) = try finalize(path: path, name: name, contentType: contentType, metadata: metadata)
            return NotesAPI.json(Self.object(id: id, file: file))
        } catch {
            return NotesAPI.error(500, "backendError", "cannot store: \(error)")
        }
    }

    /// A chunk or a status query on a session URI; `sinkCount` is the length of a sink's body, which was not kept.
    func chunk(_ request: APIRequest, sinkCount: Int? = nil) -> APIResponse {
        guard let id = request.parameter("upload_id") else { return NotesAPI.error(400, "badRequest", "no upload_id") }
        guard var session = state.withLock({ $0.sessions[id] }) else {
            return NotesAPI.error(404, "notFound", "No such upload session (it may have expired)")
        }
        guard let range = Self.contentRange(request.header("Content-Range")) else {
            return NotesAPI.error(400, "badRequest", "a chunk needs Content-Range")
        }
        state.withLock { $0.contentRanges.append(request.header("Content-Range") ?? "") }
        if let total = range.total { session.total = total }
        guard let first = range.first else {
            state.withLock { $0.statusQueries += 1 }
            return answer(id: id, session: session, googHash: request.header("X-Goog-Hash"))
        }
        state.withLock { $0.chunkRequests += 1 }
        session.chunks += 1
        if let fail = session.faults.failChunk, fail.index == session.chunks, !session.failed {
            session.failed = true
            state.withLock { $0.sessions[id] = session }
            return NotesAPI.error(fail.status, "backendError", "injected failure on chunk \(session.chunks)")
        }
        guard first <= session.received else {
            return NotesAPI.error(400, "badRequest", "chunk starts at \(first) but only \(session.received) bytes were received")
        }
        if let sinkCount {
            session.received = max(session.received, first + Int64(sinkCount))
            let updated = session
            state.withLock { $0.sessions[id] = updated }
            return answer(id: id, session: session, googHash: nil)
        }
        var bytes = request.body
        let overlap = Int(session.received - first)
        bytes = overlap < bytes.count ? bytes.dropFirst(overlap) : Data()
        if let partial = session.faults.partial, Int64(bytes.count) > partial { bytes = bytes.prefix(Int(partial)) }
        do {
            try append(bytes, to: &session)
        } catch {
            // What a real server does when its storage fails: a 503 the client retries, not a dead process.
            return NotesAPI.error(503, "backendError", "the chunk could not be stored: \(error.localizedDescription)")
        }
        if let expire = session.faults.expireAfter, session.chunks >= expire {
            state.withLock { _ = $0.sessions.removeValue(forKey: id) }
            return NotesAPI.error(404, "notFound", "the upload session expired")
        }
        return answer(id: id, session: session, googHash: request.header("X-Goog-Hash"))
    }

    /// Keeps the first `count` bytes of a dropped chunk (they did arrive), then forgets the drop fault.
    func partialChunk(uploadID: String, contentRange: String?, bytes: Data) {
        guard var session = state.withLock({ $0.sessions[uploadID] }), let range = Self.contentRange(contentRange),
              let first = range.first, first <= session.received else { return }
        if let total = range.total { session.total = total }
        session.dropped = true
        let overlap = Int(session.received - first)
        try? append(overlap < bytes.count ? bytes.dropFirst(overlap) : Data(), to: &session)
    }

    func shouldDrop(uploadID: String) -> Int64? {
        state.withLock { state in
            guard let session = state.sessions[uploadID], !session.dropped else { return nil }
            return session.faults.dropAfter
        }
    }

    private func append(_ bytes: Data, to session: inout Session) throws {
        let bytes = Self.corrupting(bytes, at: session.faults.corrupt.map(String.init), offset: session.received)
        if session.sink {
            session.received += Int64(bytes.count)
        } else if !bytes.isEmpty, let handle = FileHandle(forWritingAtPath: session.path.path) {
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: bytes)
            session.received += Int64(bytes.count)
            session.md5.hasher.update(data: bytes)
            session.crc = bytes.withUnsafeBytes { courier_crc32c_update(session.crc, $0.baseAddress, $0.count) }
        }
        let updated = session
        state.withLock { state in
            if state.sessions[updated.path.lastPathComponent] != nil { state.sessions[updated.path.lastPathComponent] = updated }
        }
    }

    /// 308 with what the server has, or 200 with the file once every byte arrived (400 if they
    /// disagree with the `X-Goog-Hash` of the completing request).
    private func answer(id: String, session: Session, googHash: String?) -> APIResponse {
        if let total = session.total, session.received >= total {
            if session.sink {
                state.withLock { _ = $0.sessions.removeValue(forKey: id) }
                return NotesAPI.json(["kind": "files#file", "name": session.name, "size": String(session.received)])
            }
            if let refusal = Self.refusal(Self.expectedHashes(googHash, metadata: [:]), md5: session.md5.hasher.finalize(),
                                          crc32c: session.crc) {
                state.withLock { _ = $0.sessions.removeValue(forKey: id) } // as Google: the session ends, nothing is stored
                try? FileManager.default.removeItem(at: session.path)
                return refusal
            }
            do {
                let (fileID, file) = try finalize(path: session.path, name: session.name, contentType: session.contentType,
                                                  metadata: session.metadata, hashed: (session.md5.hasher, session.crc, session.received))
                state.withLock { _ = $0.sessions.removeValue(forKey: id) }
                return NotesAPI.json(Self.object(id: fileID, file: file))
            } catch {
                return NotesAPI.error(500, "backendError", "cannot finalize: \(error)")
            }
        }
        var headers: [(String, String)] = [("Content-Length", "0")]
        if session.received > 0 { headers.append(("Range", "bytes=0-\(session.received - 1)")) }
        return APIResponse(status: 308, headers: headers)
    }

    @discardableResult
    private func finalize(path: URL, name: String, contentType: String, metadata: [String: String],
                          hashed: (md5: MD5Hasher, crc: UInt32, size: Int64)? = nil) throws -> (String, StoredFile) {
        var md5 = hashed?.md5 ?? MD5Hasher()
        var crc: UInt32 = hashed?.crc ?? 0
        var size: Int64 = hashed?.size ?? 0
        if hashed == nil {
            let handle = try FileHandle(forReadingFrom: path)
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                md5.update(data: chunk)
                crc = chunk.withUnsafeBytes { courier_crc32c_update(crc, $0.baseAddress, $0.count) }
                size += Int64(chunk.count)
            }
            try handle.close()
        }
        let crcBytes = withUnsafeBytes(of: crc.bigEndian) { Data($0) }
        return state.withLock { state in
            state.nextID += 1
            let id = "file-\(state.nextID)"
            let file = StoredFile(path: path, name: name, size: size, contentType: contentType,
                                  md5: md5.finalize().base64EncodedString(), crc32c: crcBytes.base64EncodedString(),
                                  generation: state.nextID, metadata: metadata)
            state.files[id] = file
            return (id, file)
        }
    }

    static func object(id: String, file: StoredFile) -> [String: Any] {
        var object: [String: Any] = ["kind": "files#file", "id": id, "name": file.name, "size": String(file.size),
                                     "contentType": file.contentType, "md5Hash": file.md5, "crc32c": file.crc32c,
                                     "generation": String(file.generation), "etag": "\"\(file.md5)\""]
        if !file.metadata.isEmpty { object["metadata"] = file.metadata }
        return object
    }

    /// `bytes a-b/total`, `bytes */total`, `bytes a-b/*`, `bytes */*`.
    static func contentRange(_ header: String?) -> (first: Int64?, total: Int64?)? {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst("bytes ".count).split(separator: "/")
        guard parts.count == 2 else { return nil }
        let total = parts[1] == "*" ? nil : Int64(parts[1])
        if parts[0] == "*" { return (nil, total) }
        let bounds = parts[0].split(separator: "-")
        guard bounds.count == 2, let first = Int64(bounds[0]) else { return nil }
        return (first, total)
    }

    /// `bytes` (which start at `offset` in the object) with byte `at` flipped, if it falls inside.
    static func corrupting(_ bytes: Data, at position: String?, offset: Int64) -> Data {
        guard let position = position.flatMap({ Int64($0) }), position >= offset, position < offset + Int64(bytes.count) else { return bytes }
        var copy = Data(bytes)
        copy[Int(position - offset)] ^= 0xFF
        return copy
    }

    /// The checksums a client declared: `X-Goog-Hash` and a multipart upload's metadata.
    static func expectedHashes(_ header: String?, metadata: [String: Any]) -> [(String, String)] {
        var expected: [(String, String)] = (header ?? "").split(separator: ",").compactMap { entry in
            let pair = entry.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            return pair.count == 2 ? (pair[0].lowercased(), pair[1]) : nil
        }
        if let md5 = metadata["md5Hash"] as? String { expected.append(("md5", md5)) }
        if let crc = metadata["crc32c"] as? String { expected.append(("crc32c", crc)) }
        return expected
    }

    /// Cloud Storage's 400 for declared checksums that disagree with the bytes; nil when they agree.
    static func refusal(_ expected: [(String, String)], md5: Data, crc32c: UInt32) -> APIResponse? {
        let actual = ["md5": md5.base64EncodedString(),
                      "crc32c": withUnsafeBytes(of: crc32c.bigEndian) { Data($0) }.base64EncodedString()]
        for (name, value) in expected where actual[name] != nil && actual[name] != value {
            let label = name == "md5" ? "MD5 hash" : "CRC32C"
            return NotesAPI.error(400, "invalid", "Provided \(label) \"\(value)\" doesn't match calculated \(label) \"\(actual[name]!)\".")
        }
        return nil
    }

    static func relatedParts(_ body: Data, boundary: String) -> [(contentType: String, body: Data)] {
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [(contentType: String, body: Data)] = []
        var search = body.startIndex
        var starts: [Data.Index] = []
        while let range = body.range(of: delimiter, in: search..<body.endIndex) {
            starts.append(range.upperBound)
            search = range.upperBound
        }
        for (index, start) in starts.enumerated() where index + 1 < starts.count {
            let end = starts[index + 1] - delimiter.count - 2 // the CRLF before the next delimiter
            guard start + 2 <= end, let split = body.range(of: Data("\r\n\r\n".utf8), in: (start + 2)..<end) else { continue }
            let head = String(decoding: body[(start + 2)..<split.lowerBound], as: UTF8.self)
            let contentType = head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-type:") }
                .map { String($0.dropFirst("content-type:".count)).trimmingCharacters(in: .whitespaces) } ?? ""
            parts.append((contentType, Data(body[split.upperBound..<end])))
        }
        return parts
    }

    // MARK: Downloads

    private func download(_ request: Request, id: String) throws -> Response {
        guard let file = state.withLock({ $0.files[id] }) else {
            return NotesAPI.error(404, "notFound", "No such file: \(id)").hummingbirdResponse
        }
        let etag = "\"\(file.md5)\""
        if let wanted = request.headers[.ifMatch], wanted != etag, wanted != "*" {
            return NotesAPI.error(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.").hummingbirdResponse
        }
        var range: Range<Int64> = 0..<file.size
        var status = HTTPResponse.Status.ok
        var headers: HTTPFields = [.contentType: file.contentType, .eTag: etag,
                                   HTTPField.Name("x-goog-hash")!: "crc32c=\(file.crc32c),md5=\(file.md5)", .acceptRanges: "bytes"]
        if let header = request.headers[.range], header.hasPrefix("bytes="), request.headers[.ifRange].map({ $0 == etag }) ?? true {
            let bounds = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            // A last byte before the first makes the range invalid (RFC 9110 §14.1.1), as does a first past the end.
            guard bounds.count == 2, let first = Int64(bounds[0]), first >= 0, first < file.size,
                  bounds[1].isEmpty || Int64(bounds[1]).map({ $0 >= first }) == true else {
                headers[.contentRange] = "bytes */\(file.size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            let last = min(Int64(bounds[1]) ?? (file.size - 1), file.size - 1)
            range = first..<(last + 1)
            status = .partialContent
            headers[.contentRange] = "bytes \(first)-\(last)/\(file.size)"
        }
        let parameters = request.uri.queryParameters
        let corrupt = parameters.get("corrupt")
        var breakAt: Int64?
        if let position = parameters.get("break").flatMap({ Int64($0) }), range.contains(position),
           state.withLock({ $0.brokenDownloads.insert("\(id)@\(position)").inserted }) {
            breakAt = position
        }
        let path = file.path
        let served = range
        let cut = breakAt ?? .max
        return Response(status: status, headers: headers, body: ResponseBody(contentLength: served.count) { writer in
            let handle = try FileHandle(forReadingFrom: path)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(served.lowerBound))
            var position = served.lowerBound
            while position < served.upperBound {
                // Large writes: a body that fits goes out with its head in one flush, so the
                // request is over at the server by the time a client that drops the body (a sliced
                // download's first answer) starts its slices; with 64 KiB pieces a slow server
                // (AddressSanitizer) was still writing, and counted two requests in flight.
                let want = Int(min(1 << 20, served.upperBound - position, cut - position))
                guard let chunk = try handle.read(upToCount: want), !chunk.isEmpty else { break }
                try await writer.write(ByteBuffer(bytes: Self.corrupting(chunk, at: corrupt, offset: position)))
                position += Int64(chunk.count)
                if position == cut { throw CancellationError() } // the connection drops mid-body
            }
            try await writer.finish(nil)
        })
    }
}

extension APIRequest {
    init(_ request: Request, body: ByteBuffer) {
        self.init(method: request.method.rawValue, rawPath: request.uri.path, query: request.uri.query ?? "",
                  headers: request.headers.map { ($0.name.rawName, $0.value) }, body: Data(body.readableBytesView))
    }
}
