import Foundation

extension ServiceActor {
    /// Starts uploading the media of `query` (``Query/upload``) to its ``Query/uploadPath``, with
    /// the query's body as the metadata, and returns a handle to follow, pause, resume or cancel it.
    ///
    /// Executing such a query (`service.execute(query)`) does the same and waits for the result.
    public nonisolated func upload<Response>(_ query: Query<Response>) -> UploadTask<Response> {
        let total = (try? query.upload?.byteCount()) ?? nil
        return UploadTask(control: UploadControl(total: total)) { control in
            try await self.runUpload(query, control: control, session: nil)
        }
    }

    /// Starts the upload that the query `convertible` describes (with ``Query/upload``).
    public nonisolated func upload<Convertible: QueryConvertible>(_ convertible: Convertible) -> UploadTask<Convertible.Response> {
        upload(convertible.makeQuery())
    }

    /// Continues a resumable upload started in another process (or before a crash). `query` is
    /// the same query rebuilt: it decodes the result and restarts the upload if the session has
    /// expired. The file must be unchanged (size, date, first MiB), else ``UploadError/fileChanged``;
    /// a stream must start at the session's ``UploadSession/offset`` (bytes the server already
    /// holds beyond it are skipped).
    public nonisolated func resumeUpload<Response>(_ session: UploadSession, query: Query<Response>) -> UploadTask<Response> {
        UploadTask(control: UploadControl(total: session.totalBytes)) { control in
            try await self.runUpload(query, control: control, session: session)
        }
    }

    /// ``resumeUpload(_:query:)`` from a session file written by ``UploadParameters/sessionFile``.
    public nonisolated func resumeUpload<Response>(from sessionFile: URL, query: Query<Response>) throws -> UploadTask<Response> {
        resumeUpload(try UploadSession(contentsOf: sessionFile), query: query)
    }

    nonisolated func runUpload<Response>(_ query: Query<Response>, control: UploadControl, session: UploadSession?)
        async throws -> Response
    {
        guard let parameters = query.upload else {
            throw UploadError(code: .invalidParameters, message: "\(query.name) has no upload parameters")
        }
        guard query.uploadPath != nil || session != nil else {
            throw UploadError(code: .invalidParameters, message: "\(query.name) has no upload path")
        }
        try query.mediaUploadLimits?.check(parameters, method: query.name)
        let execution = QueryExecution(service: self, query: query, operation: .upload)
        return try await operation(execution.context) { [self] in
            switch parameters.uploadProtocol {
            case .resumable:
                var upload = try ResumableUpload(execution: execution, parameters: parameters, control: control)
                return try await upload.run(resuming: session)
            case .multipart, .media:
                return try await singleRequestUpload(execution, parameters: parameters, control: control)
            }
        }
    }

    /// `uploadType=multipart` (metadata and media in one `multipart/related` body) or `uploadType=media`.
    private nonisolated func singleRequestUpload<Response>(_ execution: QueryExecution<Response>, parameters: UploadParameters,
                                                           control: UploadControl) async throws -> Response {
        let query = execution.query
        guard let total = try parameters.byteCount() else {
            throw UploadError(code: .invalidParameters, message: "a stream of unknown length needs the resumable protocol")
        }
        // The checksums go with the request, so the server can refuse corrupted bytes: one read of the media first.
        let checksums = parameters.verifyIntegrity ? try await SourceChecksums(parameters.source, count: total).result : nil
        var request: HTTPRequest
        if parameters.uploadProtocol == .multipart {
            request = try RequestBuilder.build(query, configuration: configuration, path: query.uploadPath, uploadType: "multipart")
            let boundary = "courier_related_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            var metadata = query.api.wireBody(query.body ?? .object([:]))
            if let checksums { metadata = Self.addingChecksums(checksums, to: metadata, api: query.api) }
            let head = Data(("--\(boundary)\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n").utf8) + metadata.serialized()
                + Data(("\r\n--\(boundary)\r\nContent-Type: \(parameters.mimeType)\r\n\r\n").utf8)
            request.body = .parts([.data(head), parameters.part(0..<total), .data(Data("\r\n--\(boundary)--\r\n".utf8))])
            request.headers["Content-Type"] = "multipart/related; boundary=\(boundary)"
        } else {
            request = try RequestBuilder.build(query, configuration: configuration, path: query.uploadPath, uploadType: "media")
            request.body = parameters.body(0..<total)
            request.headers["Content-Type"] = parameters.mimeType
        }
        if let checksums { request.headers["X-Goog-Hash"] = checksums.googHash }
        request.progress = { progress in
            control.publish(UploadProgress(bytesSent: min(progress.bytesSent, total), totalBytes: total))
        }
        // A POST: re-sent after it may have arrived only with a precondition (ifGenerationMatch=0)
        // or a declared idempotency, as the pipeline decides.
        let response: HTTPResponse
        do {
            response = try await execution.perform(request)
        } catch let error as APIError {
            if checksums != nil, let refusal = IntegrityError(refusal: error) { throw refusal }
            throw error
        }
        control.publish(UploadProgress(bytesSent: total, totalBytes: total))
        if let lost = Self.storedSizeMismatch(response.body, sent: total, api: execution.query.api) { throw lost }
        if let checksums, let object = try? JSONValue(parsing: response.body).objectValue,
           let mismatch = checksums.mismatch(with: object) {
            throw IntegrityError(message: mismatch)
        }
        do {
            return try Response.decode(from: query.api.unwrapped(response), limits: configuration.json)
        } catch var error as QueryError where error == .malformedResponse {
            // No session can read the object again: say that it may exist, so a caller does not
            // repeat the write blindly (with `ifGenerationMatch=0` a repeat is safe).
            error.message = "the server answered \(response.status), so the object may be stored, but the answer cannot be read: \(error.message)"
            throw error
        }
    }

    /// Cloud Storage's object names its `size`: one that is not the `sent` byte count means the
    /// server stored other bytes than the source (java-storage's `dataLoss`), checksums or not.
    /// Other APIs' `size` fields may mean something else, so they are not read.
    static func storedSizeMismatch(_ body: Data, sent: Int64, api: APIDescription) -> UploadError? {
        guard api.name == "storage", let object = try? JSONValue(parsing: body).objectValue, let field = object["size"],
              let size = field.stringValue.flatMap({ Int64($0) }) ?? field.numberValue?.int64Value, size != sent
        else { return nil }
        return UploadError(code: .dataLoss, message: "the server's object holds \(size) bytes; the source has \(sent)")
    }

    /// Cloud Storage's object resource takes the media's `md5Hash` and `crc32c` and refuses media
    /// that disagrees; other APIs' metadata would not know the fields, and get the header alone.
    static func addingChecksums(_ checksums: Checksums, to metadata: JSONValue, api: APIDescription) -> JSONValue {
        guard api.name == "storage", case .object(var object) = metadata else { return metadata }
        if object["crc32c"] == nil { object["crc32c"] = .string(checksums.crc32cBase64) }
        if object["md5Hash"] == nil, let md5 = checksums.md5Base64 { object["md5Hash"] = .string(md5) }
        return .object(object)
    }
}
