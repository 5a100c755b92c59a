import Foundation

extension ServiceActor {
    /// Starts uploading the media of `query` (``Query/upload``) to its ``Query/uploadPath``, with
    /// the query's body as the metadata, and returns a handle to follow, pause, resume or cancel it.
    ///
    /// Executing such a query (`service.execute(query)`) does the same and waits for the result.
    public nonisolated func upload<Response>(_ query: Query<Response>) -> UploadTask<Response> {
        let total = (try? query.upload?.byteCount()) ?? 0
        return UploadTask(control: UploadControl(total: total)) { control in
            try await self.runUpload(query, control: control, session: nil)
        }
    }

    /// Continues a resumable upload started in another process (or before a crash). `query` is
    /// the same query rebuilt: it decodes the result and restarts the upload if the session has
    /// expired. The file must be unchanged (size, date, first MiB), else ``UploadError/fileChanged``.
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
            throw UploadError(.invalidParameters, message: "\(query.name) has no upload parameters")
        }
        guard query.uploadPath != nil || session != nil else {
            throw UploadError(.invalidParameters, message: "\(query.name) has no upload path")
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
        let total = try parameters.byteCount()
        let media: HTTPRequest.Body.Part = switch parameters.source {
        case .file(let url): .file(url, range: 0..<total)
        case .data(let data): .data(data)
        }
        var request: HTTPRequest
        if parameters.uploadProtocol == .multipart {
            request = try RequestBuilder.build(query, configuration: configuration, path: query.uploadPath, uploadType: "multipart")
            let boundary = "courier_related_" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            let metadata = (query.body ?? .object([:])).serialized()
            let head = Data(("--\(boundary)\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n").utf8) + metadata
                + Data(("\r\n--\(boundary)\r\nContent-Type: \(parameters.mimeType)\r\n\r\n").utf8)
            request.body = .parts([.data(head), media, .data(Data("\r\n--\(boundary)--\r\n".utf8))])
            request.headers["Content-Type"] = "multipart/related; boundary=\(boundary)"
        } else {
            request = try RequestBuilder.build(query, configuration: configuration, path: query.uploadPath, uploadType: "media")
            request.body = .parts([media])
            request.headers["Content-Type"] = parameters.mimeType
        }
        request.progress = { progress in
            control.publish(UploadProgress(bytesSent: min(progress.bytesSent, total), totalBytes: total))
        }
        // A POST: re-sent after it may have arrived only with a precondition (ifGenerationMatch=0)
        // or a declared idempotency, as the pipeline decides.
        let response = try await execution.perform(request)
        control.publish(UploadProgress(bytesSent: total, totalBytes: total))
        if parameters.verifyIntegrity, let object = try? JSONValue(parsing: response.body).objectValue {
            let checksums = ChecksumAccumulator()
            switch parameters.source {
            case .file(let url): try ChecksumAccumulator.file(url, range: 0..<total, into: checksums)
            case .data(let data): checksums.update(data)
            }
            if let mismatch = checksums.finish().mismatch(with: object) { throw IntegrityError(message: mismatch) }
        }
        return try Response.decode(from: response, limits: configuration.jsonLimits)
    }
}
