import Foundation

/// Runs one resumable upload: performs what ``UploadStateMachine`` asks for, waits out
/// failures as the retry policy says, keeps the checksums of acknowledged bytes, and saves the
/// session after each acknowledgement.
struct ResumableUpload<Response: QueryResponse> {
    let execution: QueryExecution<Response>
    let parameters: UploadParameters
    let control: UploadControl
    let total: Int64
    private let checksums: SourceChecksums?
    private var machine: UploadStateMachine
    private var retry = RequestPipeline.AttemptState()
    private var finalResponse: HTTPResponse?

    private var service: ServiceActor { execution.service }
    private var query: Query<Response> { execution.query }

    init(execution: QueryExecution<Response>, parameters: UploadParameters, control: UploadControl) throws {
        self.execution = execution
        self.parameters = parameters
        self.control = control
        total = try parameters.byteCount()
        checksums = parameters.verifyIntegrity ? SourceChecksums(source: parameters.source, total: total) : nil
        machine = UploadStateMachine(total: total, chunkSize: parameters.effectiveChunkSize,
                                     restartWhenSessionExpires: parameters.restartWhenSessionExpires)
    }

    mutating func run(resuming session: UploadSession?) async throws -> Response {
        defer { checksums?.cancel() }
        if let session {
            guard case .file(let url) = parameters.source else {
                throw UploadError(.invalidParameters, message: "only file uploads can be resumed in another process")
            }
            let identity = try UploadSession.FileIdentity(of: url)
            guard identity == session.file, session.totalBytes == total else {
                throw UploadError(.fileChanged, message: "\(url.path) changed since the upload began")
            }
            machine = UploadStateMachine(resuming: session.sessionURI, offset: session.offset, total: total,
                                         chunkSize: session.chunkSize, restartWhenSessionExpires: parameters.restartWhenSessionExpires)
            control.record(session)
        }
        if control.pauseRequested { _ = machine.pause() }
        var action = machine.start()
        while true {
            try Task.checkCancellation()
            if control.pauseRequested, !machine.pauseRequested, let paused = machine.pause() { action = paused }
            switch action {
            case .initiate:
                action = try await initiate()
            case .sendChunk(let range):
                action = try await send(chunk: range)
            case .queryStatus:
                action = try await queryStatus()
            case .backOff:
                action = try await backOff()
            case .pause:
                try await control.waitWhilePaused()
                action = machine.resume() ?? machine.start()
            case .finish:
                return try await finish()
            case .fail(let error):
                throw error
            }
        }
    }

    // MARK: Requests

    private mutating func initiate() async throws -> UploadStateMachine.Action {
        var request = try RequestBuilder.build(query, configuration: execution.configuration, path: query.uploadPath,
                                               uploadType: "resumable")
        request.headers["X-Upload-Content-Type"] = parameters.mimeType
        request.headers["X-Upload-Content-Length"] = String(total)
        if request.body.isEmpty { request.headers["Content-Length"] = "0" }
        // Opening a session writes nothing: a repeat only opens another, which is left to expire.
        request.idempotency = .always
        control.publish(UploadProgress(bytesSent: 0, totalBytes: total))
        let response: HTTPResponse
        do {
            // The upload protocol recovers from failures itself (see `failed(with:sessionGone:)`).
            response = try await execution.perform(request) { $0.retry = .disabled }
        } catch {
            return try failed(with: error, sessionGone: false)
        }
        guard let location = response.headers["Location"],
              let sessionURI = URL(string: location, relativeTo: RequestBuilder.rootURL(for: query, configuration: execution.configuration))?.absoluteURL
        else {
            throw UploadError(.protocolViolation, message: "the initiation answered \(response.status) without a Location")
        }
        let next = machine.initiated(sessionURI: sessionURI)
        execution.configuration.logger.debug("upload session opened", metadata: [
            "query": "\(query.name)", "session": "\(Redaction.url(sessionURI.absoluteString))", "bytes": "\(total)",
        ])
        saveSession()
        return next
    }

    private mutating func send(chunk range: Range<Int64>) async throws -> UploadStateMachine.Action {
        guard let sessionURI = machine.sessionURI else { return machine.failed(sessionGone: true) }
        var request = HTTPRequest(method: .put, url: sessionURI)
        request.headers["Content-Range"] = UploadStateMachine.contentRange(range, total: total)
        switch parameters.source {
        case .file(let url): request.body = range.isEmpty ? .empty : .file(url, range: range)
        case .data(let data): request.body = .data(data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound)))
        }
        if range.isEmpty { request.headers["Content-Length"] = "0" }
        let control = control
        let total = total
        request.progress = { progress in
            control.publish(UploadProgress(bytesSent: min(range.lowerBound + progress.bytesSent, total), totalBytes: total))
        }
        return try await exchange(request)
    }

    private mutating func queryStatus() async throws -> UploadStateMachine.Action {
        guard let sessionURI = machine.sessionURI else { return machine.failed(sessionGone: true) }
        var request = HTTPRequest(method: .put, url: sessionURI)
        request.headers["Content-Range"] = "bytes */\(total)"
        request.headers["Content-Length"] = "0"
        return try await exchange(request)
    }

    /// One chunk or status query, and what its answer means.
    private mutating func exchange(_ request: HTTPRequest) async throws -> UploadStateMachine.Action {
        let response: HTTPResponse
        do {
            response = try await execution.perform(request) { context in
                context.retry = .disabled
                context.accepts = { $0 < 300 || $0 == 308 || $0 == 404 || $0 == 410 }
            }
        } catch {
            return try failed(with: error, sessionGone: false)
        }
        switch response.status {
        case 308:
            guard let lastByte = UploadStateMachine.lastAcknowledgedByte(fromRange: response.headers["Range"]) else {
                throw UploadError(.protocolViolation, message: "a 308 with an unreadable Range: \(response.headers["Range"] ?? "")")
            }
            let acknowledgedBefore = machine.offset
            let next = machine.incomplete(lastByte: lastByte)
            // Progress renews the retry budget. A 308 that acknowledges nothing new must not:
            // a server that answers status queries but never takes a chunk would loop forever.
            if machine.offset > acknowledgedBefore {
                retry = RequestPipeline.AttemptState()
            }
            control.publish(UploadProgress(bytesSent: machine.offset, totalBytes: total))
            saveSession()
            return next
        case 404, 410:
            execution.configuration.logger.debug("upload session gone", metadata: [
                "query": "\(query.name)", "status": "\(response.status)", "acknowledged": "\(machine.offset)",
            ])
            let next = machine.failed(sessionGone: true)
            if case .fail = next { removeSession() }
            return next
        default:
            finalResponse = response
            return machine.completed()
        }
    }

    /// A failed request: transient ones wait and ask the server where things stand; others end the
    /// upload. Every request of the session is idempotent by protocol (a chunk names its range), so
    /// the retry rules are the pipeline's with idempotency granted.
    private mutating func failed(with error: any Error, sessionGone: Bool) throws -> UploadStateMachine.Action {
        let outcome: RetryStateMachine.Outcome
        switch error {
        case let error as TransportError: outcome = .transportFailure(error)
        case let error as APIError:
            outcome = .response(status: error.status, retryAfter: RetryAfter.parse(error.headers["Retry-After"]),
                                reasons: error.items.compactMap(\.reason))
        default: throw error
        }
        guard let delay = service.pipeline(execution.context).decide(outcome, idempotent: true, state: &retry) else { throw error }
        pending = (delay, "\(error)", (error as? APIError)?.status)
        return machine.failed(sessionGone: sessionGone)
    }

    private var pending: (delay: Duration, reason: String, status: Int?) = (.zero, "", nil)

    private mutating func backOff() async throws -> UploadStateMachine.Action {
        try await service.pipeline(execution.context).wait(pending.delay, attempt: retry.retries, reason: pending.reason,
                                                           status: pending.status)
        return machine.retryAfterBackoff()
    }

    private mutating func finish() async throws -> Response {
        guard let response = finalResponse else { throw UploadError(.protocolViolation, message: "finished without a response") }
        control.publish(UploadProgress(bytesSent: total, totalBytes: total))
        if let checksums, let object = try? JSONValue(parsing: response.body).objectValue {
            if let mismatch = try await checksums.result.mismatch(with: object) { throw IntegrityError(message: mismatch) }
        }
        removeSession()
        return try Response.decode(from: response, limits: execution.configuration.jsonLimits)
    }

    // MARK: Session persistence

    private func saveSession() {
        guard case .file(let url) = parameters.source, let sessionURI = machine.sessionURI,
              let identity = try? UploadSession.FileIdentity(of: url) else { return }
        let session = UploadSession(sessionURI: sessionURI, offset: machine.offset, totalBytes: total,
                                    chunkSize: parameters.effectiveChunkSize, mimeType: parameters.mimeType, file: identity,
                                    queryName: query.name, verifyIntegrity: parameters.verifyIntegrity)
        control.record(session)
        if let file = parameters.sessionFile { try? session.write(to: file) }
    }

    private func removeSession() {
        control.record(nil)
        if let file = parameters.sessionFile { try? FileManager.default.removeItem(at: file) }
    }
}

/// MD5 and CRC32C of the whole source, computed once in the background while chunks travel.
///
/// The source's bytes are fixed, so hashing them in order gives exactly what the server must hold
/// at the end, whatever it acknowledged on the way (partial 308s, resends, restarts from zero).
final class SourceChecksums: Sendable {
    private let task: Task<Checksums, any Error>

    init(source: UploadParameters.Source, total: Int64) {
        task = Task.detached(priority: .utility) {
            let accumulator = ChecksumAccumulator()
            switch source {
            case .file(let url): try ChecksumAccumulator.file(url, range: 0..<total, into: accumulator)
            case .data(let data): accumulator.update(data)
            }
            return accumulator.finish()
        }
    }

    var result: Checksums {
        get async throws { try await task.value }
    }

    func cancel() { task.cancel() }
}
