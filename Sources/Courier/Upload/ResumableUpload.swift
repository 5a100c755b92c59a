import Foundation

/// Runs one resumable upload: performs what ``UploadStateMachine`` asks for, waits out
/// failures as the retry policy says, sizes chunks from their throughput, keeps the checksums
/// of the source and sends them with the request that completes the upload, and saves the
/// session after each acknowledgement.
struct ResumableUpload<Response: QueryResponse> {
    let execution: QueryExecution<Response>
    let parameters: UploadParameters
    let control: UploadControl
    private var machine: UploadStateMachine
    private var sizer: ChunkSizer
    /// A stream's bytes, read ahead; nil for files and data.
    private var stream: (source: UploadStream, buffer: UploadStreamBuffer)?
    private var checksums: SourceChecksums?
    /// The task reading a stream into its buffer.
    private var producer: Task<Checksums?, any Error>?
    private var retry = RequestPipeline.AttemptState()
    /// Cloud Storage's invocation headers of the step in progress (the initiation, or the chunk
    /// the server has not yet acknowledged): kept across the upload's own recovery of it (the
    /// status query, the chunk sent again), renewed when the step is done, as google-cloud-go
    /// gives each chunk its own invocation. The pipeline's per-request ones are off for these
    /// requests (`perform`).
    private var invocation: InvocationHeaders?
    private var finalResponse: HTTPResponse?
    private var pending: (delay: Duration, reason: String, status: Int?) = (.zero, "", nil)

    private var service: ServiceActor { execution.service }
    private var query: Query<Response> { execution.query }

    init(execution: QueryExecution<Response>, parameters: UploadParameters, control: UploadControl) throws {
        self.execution = execution
        self.parameters = parameters
        self.control = control
        sizer = parameters.chunkSizer
        machine = UploadStateMachine(total: try parameters.byteCount(), chunkSize: sizer.size,
                                     restartWhenSessionExpires: parameters.restartWhenSessionExpires)
        if case .stream(let source) = parameters.source {
            machine.rewindable = false
            stream = (source, UploadStreamBuffer(start: 0, capacity: Self.readAhead(sizer.size)))
        }
    }

    /// A stream is read up to one chunk past the one in flight (plus the byte that tells whether it is the last).
    private static func readAhead(_ chunkSize: Int64) -> Int64 { 2 * chunkSize + 1 }

    mutating func run(resuming session: UploadSession?) async throws -> Response {
        if let session { try adopt(session) }
        startChecksums(resuming: session)
        let outcome: Result<Response, any Error>
        do { outcome = .success(try await runSteps()) } catch { outcome = .failure(error) }
        // The upload's background work ends with it. The hashing is waited for (it stops within
        // a MiB); the stream's reader is not, as the caller's sequence may not heed cancellation.
        producer?.cancel()
        stream?.buffer.cancel()
        await checksums?.stop()
        return try outcome.get()
    }

    private mutating func runSteps() async throws -> Response {
        if control.pauseRequested { _ = machine.pause() }
        var action = machine.start()
        while true {
            try Task.checkCancellation()
            if control.pauseRequested, !machine.pauseRequested, let paused = machine.pause() { action = paused }
            switch action {
            case .initiate:
                action = try await initiate()
            case .readSource(let through):
                action = try await readSource(through: through)
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

    /// Continues `session` from another process: the source must be the one it was made from.
    private mutating func adopt(_ session: UploadSession) throws {
        switch parameters.source {
        case .file, .filePart:
            guard let file = parameters.file, let recorded = session.file else {
                throw UploadError(code: .invalidParameters, message: "the session was not made from a file")
            }
            guard try UploadSession.FileIdentity(of: file.url) == recorded, session.totalBytes == machine.total else {
                throw UploadError(code: .fileChanged, message: "\(file.url.path) changed since the upload began")
            }
        case .stream:
            guard session.file == nil else { throw UploadError(code: .invalidParameters, message: "the session was made from a file, not a stream") }
        case .data:
            throw UploadError(code: .invalidParameters, message: "only file and stream uploads can be resumed in another process")
        }
        // A session is the caller's to keep (a file, a database): checked as input. Its chunks
        // carry the service's credentials, so its URI must be where this upload's session would be.
        try Self.checkSessionHost(session.sessionURI, root: RequestBuilder.rootURL(for: query, configuration: execution.configuration),
                                  universe: execution.configuration.universeDomain ?? UniverseDomain.googleDefault)
        guard session.offset >= 0, (session.totalBytes ?? 0) >= 0, session.offset <= session.totalBytes ?? .max else {
            throw UploadError(code: .invalidParameters, message: "the session's offset \(session.offset) does not lie within its \(session.totalBytes.map(String.init) ?? "unknown") bytes")
        }
        let chunkSize = ChunkSizer.rounded(min(session.chunkSize, UploadParameters.largestChunkSize))
        sizer = ChunkSizer(initial: chunkSize, maximum: max(chunkSize, sizer.maximum))
        var resumed = UploadStateMachine(resuming: session.sessionURI, offset: session.offset, total: session.totalBytes,
                                         chunkSize: chunkSize, restartWhenSessionExpires: parameters.restartWhenSessionExpires)
        resumed.rewindable = machine.rewindable
        machine = resumed
        if let source = stream?.source {
            // The stream given to resume starts at the saved offset.
            stream = (source, UploadStreamBuffer(start: session.offset, crc32cBeforeStart: session.acknowledgedCRC32C ?? 0,
                                                 capacity: Self.readAhead(chunkSize)))
        }
        control.record(session)
    }

    /// A resumed session's URI: at this upload's own host (its root URL's scheme, host and
    /// port: Cloud Storage's, an emulator's), or over https anywhere in the service's universe
    /// (a regional endpoint). Anywhere else, a session file someone edited or brought from
    /// elsewhere would have the service's token sent to a host it is not for.
    static func checkSessionHost(_ uri: URL, root: URL, universe: String) throws(UploadError) {
        let scheme = uri.scheme?.lowercased(), host = uri.host?.lowercased() ?? ""
        let atRoot = scheme == root.scheme?.lowercased() && host == root.host?.lowercased() && uri.port == root.port
        let inUniverse = scheme == "https" && (host == universe || host.hasSuffix(".\(universe)")) && uri.user == nil
        guard atRoot || inUniverse else {
            throw UploadError(code: .invalidParameters,
                              message: "the session's URI is at \(scheme ?? "?")://\(host), neither this upload's host (\(root.host ?? "?")) nor in \(universe) over https: its chunks would carry the service's credentials there")
        }
    }

    /// Checksums of the whole source: a file's or data's hashed in the background while chunks
    /// travel; a stream's as it is read (a resumed stream continues the saved CRC32C; its MD5 is lost).
    private mutating func startChecksums(resuming session: UploadSession?) {
        if let stream {
            var seed: (md5: Bool, crc: UInt32, count: Int64)?
            if parameters.verifyIntegrity {
                // A stream resumed from byte 0 is the whole source again, so both sums start afresh.
                seed = if let session, session.offset > 0 { session.acknowledgedCRC32C.map { (false, $0, session.offset) } } else { (true, 0, 0) }
            }
            let task = Self.pump(stream.source, into: stream.buffer, hashing: seed)
            producer = task
            if seed != nil { checksums = SourceChecksums(task: task) }
        } else if parameters.verifyIntegrity, let total = machine.total {
            checksums = SourceChecksums(parameters.source, count: total)
        }
    }

    /// Reads `source` into `buffer` in a task of its own, hashing what it reads.
    private static func pump(_ source: UploadStream, into buffer: UploadStreamBuffer,
                             hashing seed: (md5: Bool, crc: UInt32, count: Int64)?) -> Task<Checksums?, any Error> {
        Task<Checksums?, any Error> {
            let accumulator = seed.map { ChecksumAccumulator(md5: $0.md5, crc32c: $0.crc, count: $0.count) }
            let iterator = source.makeIterator()
            do {
                while let data = try await iterator.next() {
                    accumulator?.update(data)
                    try await buffer.append(data)
                }
                buffer.finish()
            } catch {
                buffer.finish(throwing: error)
                throw error
            }
            return accumulator?.finish()
        }
    }

    // MARK: Requests

    private mutating func initiate() async throws -> UploadStateMachine.Action {
        var request = try RequestBuilder.build(query, configuration: execution.configuration, path: query.uploadPath,
                                               uploadType: "resumable")
        request.headers["X-Upload-Content-Type"] = parameters.mimeType
        if let total = machine.total { request.headers["X-Upload-Content-Length"] = String(total) }
        if request.body.isEmpty { request.headers["Content-Length"] = "0" }
        // The initiation follows its method's class where the API has one: Cloud Storage's
        // `objects.insert` repeats only with `ifGenerationMatch`. Without a class, opening a
        // session writes nothing: a repeat only opens another, which is left to expire.
        if query.methodIdempotency == nil, query.execution.idempotency == .automatic { request.idempotency = .always }
        control.publish(UploadProgress(bytesSent: 0, totalBytes: machine.total))
        let response: HTTPResponse
        do {
            // The upload protocol recovers from failures itself (see `failed(with:sessionGone:)`).
            response = try await perform(request) { $0.retry = .disabled }
        } catch {
            return try failed(with: error, sessionGone: false, idempotent: request.isIdempotent)
        }
        invocation = nil
        guard let location = response.headers["Location"],
              let sessionURI = URL(string: location, relativeTo: RequestBuilder.rootURL(for: query, configuration: execution.configuration))?.absoluteURL
        else {
            throw UploadError(code: .protocolViolation, message: "the initiation answered \(response.status) without a Location")
        }
        let next = machine.initiated(sessionURI: sessionURI)
        execution.configuration.telemetry.logger.debug("upload session opened", metadata: Redaction.metadata([
            "query": "\(query.name)", "session": "\(Redaction.url(sessionURI.absoluteString))",
            "bytes": "\(machine.total.map(String.init) ?? "unknown")",
        ]))
        saveSession()
        return next
    }

    private mutating func readSource(through end: Int64) async throws -> UploadStateMachine.Action {
        guard let buffer = stream?.buffer else { throw UploadError(code: .protocolViolation, message: "a source of known size was read ahead") }
        let (available, ended) = try await buffer.fill(through: end)
        try query.mediaUploadLimits?.checkSize(available, method: query.name)
        return machine.sourceRead(available: available, ended: ended)
    }

    private mutating func send(chunk range: Range<Int64>) async throws -> UploadStateMachine.Action {
        guard let sessionURI = machine.sessionURI else { return machine.failed(sessionGone: true) }
        var request = RequestBuilder.followUp(query, method: .put, url: sessionURI, configuration: execution.configuration)
        request.headers["Content-Range"] = UploadStateMachine.contentRange(range, total: machine.total)
        if let buffer = stream?.buffer {
            // The buffer's pieces as they are: the chunk is not copied again.
            request.body = range.isEmpty ? .empty : .parts(try buffer.pieces(range).map { .data($0) })
        } else {
            request.body = parameters.body(range)
            prefetch(after: range)
        }
        if range.isEmpty { request.headers["Content-Length"] = "0" }
        if machine.isFinal(range) { try await addChecksums(to: &request) }
        let control = control
        let total = machine.total
        request.progress = { progress in
            control.publish(UploadProgress(bytesSent: range.lowerBound + min(progress.bytesSent, Int64(range.count)), totalBytes: total))
        }
        let started = ContinuousClock.now
        return try await exchange(request, sent: (range, started))
    }

    private mutating func queryStatus() async throws -> UploadStateMachine.Action {
        guard let sessionURI = machine.sessionURI else { return machine.failed(sessionGone: true) }
        var request = RequestBuilder.followUp(query, method: .put, url: sessionURI, configuration: execution.configuration)
        request.headers["Content-Range"] = "bytes */\(machine.total.map(String.init) ?? "*")"
        request.headers["Content-Length"] = "0"
        // With every byte sent, this request completes the upload (the end of a stream on a chunk boundary).
        if let total = machine.total, machine.offset == total { try await addChecksums(to: &request) }
        return try await exchange(request, sent: nil)
    }

    /// `X-Goog-Hash` with the source's MD5 and CRC32C, on the request that completes the upload:
    /// Cloud Storage then refuses bytes that were corrupted on the way.
    private func addChecksums(to request: inout HTTPRequest) async throws {
        guard let checksums else { return }
        request.headers["X-Goog-Hash"] = try await checksums.result.googHash
    }

    /// Asks the kernel to read the next chunk of a file while this one is sent.
    private func prefetch(after range: Range<Int64>) {
        guard let file = parameters.file, let total = machine.total, range.upperBound < total else { return }
        let descriptor = open(file.url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let length = min(Int64(machine.chunkSize), total - range.upperBound)
        _ = posix_fadvise(descriptor, off_t(file.base + range.upperBound), off_t(length), POSIX_FADV_WILLNEED)
    }

    /// `request` through the pipeline, with the invocation headers of the step it belongs to.
    private mutating func perform(_ request: HTTPRequest, configure: (inout RequestContext) -> Void) async throws
        -> HTTPResponse
    {
        let request = execution.context.stampsInvocation ? InvocationHeaders.stamp(request, continuing: &invocation) : request
        return try await execution.perform(request) { context in
            configure(&context)
            context.stampsInvocation = false
        }
    }

    /// One chunk or status query, and what its answer means.
    private mutating func exchange(_ request: HTTPRequest, sent: (range: Range<Int64>, started: ContinuousClock.Instant)?)
        async throws -> UploadStateMachine.Action
    {
        let response: HTTPResponse
        do {
            response = try await perform(request) { context in
                context.retry = .disabled
                context.accepts = { $0 < 300 || $0 == 308 || $0 == 404 || $0 == 410 }
            }
        } catch let error as APIError where request.headers["X-Goog-Hash"] != nil {
            if let refusal = IntegrityError(refusal: error) {
                removeSession()
                throw refusal
            }
            return try failed(with: error, sessionGone: false)
        } catch {
            return try failed(with: error, sessionGone: false)
        }
        switch response.status {
        case 308:
            guard let lastByte = UploadStateMachine.lastAcknowledgedByte(fromRange: response.headers["Range"]) else {
                throw UploadError(code: .protocolViolation, message: "a 308 with an unreadable Range: \(response.headers["Range"] ?? "")")
            }
            let acknowledgedBefore = machine.offset
            if let sent, !sent.range.isEmpty {
                machine.setChunkSize(sizer.record(bytes: Int64(sent.range.count), elapsed: ContinuousClock.now - sent.started))
                stream?.buffer.setCapacity(Self.readAhead(machine.chunkSize))
            }
            let next = machine.incomplete(lastByte: lastByte)
            if let buffer = stream?.buffer {
                guard machine.offset >= buffer.start else {
                    throw UploadError(code: .protocolViolation, message: "the server holds \(machine.offset) bytes, fewer than the \(buffer.start) it acknowledged before; a stream cannot be read again")
                }
                buffer.release(before: machine.offset)
            }
            // Progress renews the retry budget. A 308 that acknowledges nothing new must not:
            // a server that answers status queries but never takes a chunk would loop forever.
            if machine.offset > acknowledgedBefore {
                retry = RequestPipeline.AttemptState()
                invocation = nil
            }
            control.publish(UploadProgress(bytesSent: machine.offset, totalBytes: machine.total))
            saveSession()
            return next
        case 404, 410:
            execution.configuration.telemetry.logger.debug("upload session gone", metadata: Redaction.metadata([
                "query": "\(query.name)", "status": "\(response.status)", "acknowledged": "\(machine.offset)",
            ]))
            let next = machine.failed(sessionGone: true)
            if case .fail = next { removeSession() }
            invocation = nil // a new session starts with a new initiation
            return next
        default:
            guard isReadable(response) else {
                // The object exists; its resource was cut on the way (java-storage's "unexpected EOF").
                execution.configuration.telemetry.logger.debug("upload's final answer unreadable; reading it again", metadata: Redaction.metadata([
                    "query": "\(query.name)", "status": "\(response.status)", "bytes": "\(response.body.count)",
                ]))
                let next = machine.completedUnreadably()
                if case .finish = next { finalResponse = response }
                saveSession()
                return next
            }
            finalResponse = response
            return machine.completed()
        }
    }

    /// Whether a final answer holds what the upload returns: JSON, or, for a response type that
    /// needs none and no checksums to compare, whatever decodes.
    private func isReadable(_ response: HTTPResponse) -> Bool {
        let limits = execution.configuration.json
        if (try? JSONValue(parsing: response.body, limits: limits)) != nil { return true }
        return checksums == nil && (try? Response.decode(from: response, limits: limits)) != nil
    }

    /// A failed request: transient ones wait and ask the server where things stand; others end the
    /// upload. Every request of the session is idempotent by protocol (a chunk names its range), so
    /// the retry rules are the pipeline's with idempotency granted; the initiation's is its method's.
    private mutating func failed(with error: any Error, sessionGone: Bool, idempotent: Bool = true) throws -> UploadStateMachine.Action {
        let outcome: RetryStateMachine.Outcome
        switch error {
        case let error as TransportError: outcome = .transportFailure(error)
        case let error as APIError:
            outcome = .response(status: error.status, retryAfter: RetryAfter.parse(error.headers["Retry-After"]),
                                reasons: error.items.compactMap(\.reason))
        default: throw error
        }
        guard let delay = service.pipeline(execution.context).decide(outcome, idempotent: idempotent, state: &retry) else { throw error }
        pending = (delay, "\(error)", (error as? APIError)?.status)
        return machine.failed(sessionGone: sessionGone)
    }

    private mutating func backOff() async throws -> UploadStateMachine.Action {
        try await service.pipeline(execution.context).wait(pending.delay, attempt: retry.retries, reason: pending.reason,
                                                           status: pending.status)
        return machine.retryAfterBackoff()
    }

    private mutating func finish() async throws -> Response {
        guard let response = finalResponse else { throw UploadError(code: .protocolViolation, message: "finished without a response") }
        let total = machine.total ?? machine.offset
        control.publish(UploadProgress(bytesSent: total, totalBytes: total))
        if let lost = ServiceActor.storedSizeMismatch(response.body, sent: total, api: query.api) {
            removeSession()
            throw lost
        }
        if let checksums {
            if let object = try? JSONValue(parsing: response.body).objectValue {
                if let mismatch = try await checksums.result.mismatch(with: object) { throw IntegrityError(message: mismatch) }
            } else {
                execution.configuration.telemetry.logger.warning("the upload's final answer holds no object: its checksums were not compared",
                                                                 metadata: Redaction.metadata(["query": "\(query.name)"]))
            }
        }
        // A body that does not decode keeps the session: its status query can read the object later.
        let decoded = try Response.decode(from: query.api.unwrapped(response), limits: execution.configuration.json)
        removeSession()
        return decoded
    }

    // MARK: Session persistence

    private func saveSession() {
        guard let sessionURI = machine.sessionURI else { return }
        var identity: UploadSession.FileIdentity?
        var acknowledgedCRC32C: UInt32?
        switch parameters.source {
        case .file, .filePart:
            guard let url = parameters.file?.url, let file = try? UploadSession.FileIdentity(of: url) else { return }
            identity = file
        case .stream:
            if parameters.verifyIntegrity { acknowledgedCRC32C = stream?.buffer.acknowledgedCRC32C }
        case .data:
            return
        }
        let session = UploadSession(sessionURI: sessionURI, offset: machine.offset, totalBytes: machine.total,
                                    chunkSize: machine.chunkSize, mimeType: parameters.mimeType, file: identity,
                                    queryName: query.name, verifyIntegrity: parameters.verifyIntegrity,
                                    acknowledgedCRC32C: acknowledgedCRC32C)
        control.record(session)
        if let file = parameters.sessionFile { try? session.write(to: file) }
    }

    private func removeSession() {
        control.record(nil)
        if let file = parameters.sessionFile { try? FileManager.default.removeItem(at: file) }
    }
}
