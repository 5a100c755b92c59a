import Foundation

extension ServiceActor {
    /// Sends `request` and returns the response with its body in memory.
    ///
    /// The request takes the one pipeline (Docs/Pipeline.md): the test handler, the limiter,
    /// logging, events and metrics apply. A non-2xx status is a response, not an error, and by
    /// default nothing is retried and no credentials are added; ``RequestOptions`` change both and
    /// name the request for ``cancel(requestID:)``.
    ///
    /// The body is buffered up to ``Configuration/Transport-swift.struct/maxResponseBodySize``; a larger one fails with
    /// ``TransportError/bodyTooLarge`` and memory never grows past the limit. Cancelling the
    /// calling task removes the transfer from the multi handle on the loop's next turn and throws
    /// `CancellationError`; a task cancelled before the transfer starts never opens a connection.
    public nonisolated(nonsending) func send(_ request: HTTPRequest, options: RequestOptions = RequestOptions()) async throws
        -> HTTPResponse
    {
        try await raw(request, BufferedTransmission(), rawContext(options, operation: .send), options)
    }

    /// Sends `request` and writes a 2xx body straight to `file`, never holding it in memory.
    ///
    /// The file is created or truncated at the first body byte of a 2xx response; any other
    /// status leaves the file untouched and returns its (bounded) body in the response. With
    /// `append`, bytes are added to an existing file, as a `Range` resume needs. Retries follow
    /// the service's policy unless `options` say otherwise (a retry starts the file anew).
    ///
    /// For media that should survive a dropped connection (`Range` resume, verification, slices),
    /// use ``downloadFile(_:to:options:requestOptions:)`` instead.
    public nonisolated(nonsending) func send(_ request: HTTPRequest, writingBodyTo file: URL, append: Bool = false,
                                             options: RequestOptions = RequestOptions()) async throws -> HTTPResponse {
        try await raw(request, FileTransmission(file: file, append: append),
                      rawContext(options, operation: .download, retry: configuration.retry), options)
    }

    /// Sends `request` and returns as soon as the response head arrives; the body follows as an
    /// `AsyncSequence` of chunks.
    ///
    /// Receiving pauses (`curl_easy_pause`) while more than 1 MiB waits unread, so a slow
    /// consumer holds the server back instead of filling memory. Dropping the body before its
    /// end cancels the transfer. The pipeline applies up to the response head.
    public nonisolated(nonsending) func stream(_ request: HTTPRequest, options: RequestOptions = RequestOptions()) async throws
        -> HTTPStreamingResponse
    {
        try await raw(request, StreamedTransmission(), rawContext(options, operation: .stream), options)
    }

    /// The context of a raw request that is not retried unless `options` ask. Out of line, so
    /// the caller's async frame, alive while the request is in flight, holds no policy (128
    /// bytes) nor the options' strings.
    @inline(never)
    nonisolated func rawContext(_ options: RequestOptions, operation: RequestContext.Operation) -> RequestContext {
        rawContext(options, operation: operation, retry: .disabled)
    }

    /// The context of a raw request: accepts every status, retries only when asked.
    nonisolated func rawContext(_ options: RequestOptions, operation: RequestContext.Operation,
                                retry: RetryPolicy) -> RequestContext {
        var context = RequestContext(requestID: options.requestID, name: options.name ?? operation.rawValue,
                                     operation: operation, retry: options.retry ?? retry,
                                     testHandler: configuration.testing.handler, authorize: options.authorize)
        context.throwsRefusedStatus = false // a non-2xx answer is the caller's to judge
        context.isRaw = true
        context.rateLimitKey = options.rateLimitKey
        return context
    }

    /// A raw request as an operation: registered for ``cancel(requestID:)`` only when the caller
    /// named it. An unnamed one costs no child task and no closure: each async closure call is an
    /// executor hop, a measurable share of a small request (Docs/Pipeline.md).
    private nonisolated(nonsending) func raw<T: Transmission>(_ request: HTTPRequest, _ transmission: T,
                                                              _ context: RequestContext, _ options: RequestOptions)
        async throws -> T.Output
    {
        if Self.isRegistered(options, tracing: tracing) { return try await registered(request, transmission, context) }
        let started = operationStarted(context)
        // The answer goes straight to the caller (`return try await`): held in a local until
        // `operationFinished` ran, it took two slots of this frame, alive while in flight.
        var failure: (any Error)?
        defer { operationFinished(context, since: started, error: failure) }
        do {
            return try await pipeline(context).run(transmission) { request }
        } catch {
            failure = error
            throw error
        }
    }

    /// Whether a raw request runs as a registered operation. Out of line, so `raw`'s frame holds
    /// no copy of the ID or of the tracing settings.
    @inline(never)
    private static func isRegistered(_ options: RequestOptions, tracing: PipelineTracing?) -> Bool {
        options.requestID != nil || tracing != nil
    }

    @inline(never)
    private nonisolated(nonsending) func registered<T: Transmission>(_ request: HTTPRequest, _ transmission: T,
                                                                     _ context: RequestContext) async throws -> T.Output {
        try await operation(context) { [self] in try await pipeline(context).run(transmission) { request } }
    }

    // MARK: Transport: one attempt on the wire, for the pipeline's transmissions
    //
    // An attempt does not run on the actor: the caller builds the transfer on its own thread and
    // hands it to the loop in one inbox entry (no job of the caller's task runs on the loop, so
    // an ordinary task costs the loop no task switch on the way in, nor one on the way out).
    // The loop checks the service's phase and whether the transfer was cancelled meanwhile when
    // it takes the entry (``CurlEventLoop/submit(_:sink:cancelled:)``), so the order against shutdown and
    // cancellation is the loop's, as before.

    /// One buffered exchange; libcurl's own re-sends of it are counted in `resends`.
    nonisolated(nonsending) func transmit(_ request: HTTPRequest, resends: TransportResends) async throws -> HTTPResponse {
        try await start(request, delivery: .buffered(limit: configuration.transport.maxResponseBodySize), file: nil, resends: resends)
    }

    /// One exchange whose 2xx body goes to `file`.
    nonisolated(nonsending) func transmit(_ request: HTTPRequest, to file: URL, append: Bool, resends: TransportResends) async throws
        -> HTTPResponse
    {
        try await start(request, delivery: .file(errorLimit: 1 << 20), file: FileOutput(path: file.path, append: append),
                        resends: resends)
    }

    private nonisolated(nonsending) func start(_ request: HTTPRequest, delivery: TransferStateMachine.Delivery, file: FileOutput?,
                                               resends: TransportResends) async throws -> HTTPResponse
    {
        if request.body.isEmptyStream {
            return try await start(request.drainingEmptyStream(), delivery: delivery, file: file, resends: resends)
        }
        let transfer = try makeTransfer(request, delivery: delivery, resends: resends)
        transfer.fileOutput = file
        let bound = LoopBound(transfer)
        defer { transfer.receiveOutcome() }
        // The standard library's variant without an isolation parameter: it stays on the caller's
        // executor, which is what this `nonisolated(nonsending)` function wants anyway, where
        // `withTaskCancellationHandler(operation:onCancel:isolation:)` switches to `#isolation` on
        // the way in and out. Two executor switches a request fewer; on a task that prefers the
        // loop each was a read of the task's preference under its status lock (Docs/Performance.md, "Decisions").
        return try await _unsafeInheritExecutor_withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in submit(bound, continuation) }
        } onCancel: { [loop] in
            loop.execute { bound.value.cancel(with: CancellationError()) }
        }
    }

    /// Hands `bound`'s transfer to the loop. Out of line: the closure that calls it has an async
    /// frame of its own, alive while the request is in flight, and the sink and the
    /// cancellation check inlined there made it 256 bytes.
    @inline(never)
    private nonisolated func submit(_ bound: LoopBound<Transfer>, _ continuation: UnsafeContinuation<HTTPResponse, any Error>) {
        loop.submit(bound.value, sink: .response(continuation), cancelled: Task.isCancelled)
    }

    /// One exchange that returns at the response head.
    nonisolated(nonsending) func transmitStreaming(_ request: HTTPRequest, resends: TransportResends) async throws -> HTTPStreamingResponse {
        if request.body.isEmptyStream { return try await transmitStreaming(request.drainingEmptyStream(), resends: resends) }
        let transfer = try makeTransfer(request, delivery: .streaming(highWater: 1 << 20, lowWater: 256 << 10), resends: resends)
        let bound = LoopBound(transfer)
        let boundBuffer = LoopBound(ResponseBodyBuffer())
        defer { transfer.receiveOutcome() }
        let head = try await _unsafeInheritExecutor_withTaskCancellationHandler { // as in `start`
            try await withUnsafeThrowingContinuation { continuation in
                boundBuffer.value.awaitHead(continuation) // the loop reaches the buffer only through the sink
                loop.submit(bound.value, sink: .stream(boundBuffer.value), cancelled: Task.isCancelled)
            }
        } onCancel: { [loop] in
            loop.execute { bound.value.cancel(with: CancellationError()) }
        }
        let body = HTTPResponseBody(handle: ResponseStreamHandle(service: self, transfer: bound, buffer: boundBuffer))
        return HTTPStreamingResponse(head: head, body: body)
    }

    /// A transfer for `request`, on the caller's thread: validated, with the service's timeouts.
    private nonisolated func makeTransfer(_ request: HTTPRequest, delivery: TransferStateMachine.Delivery, resends: TransportResends)
        throws -> Transfer
    {
        let target = try request.validatedTarget()
        try checkAccepting()
        return Transfer(request: request, target: target,
                        delivery: delivery, sink: nil, multi: loop.multi, resends: resends)
    }

    /// The next chunk of a streamed body; called by ``HTTPResponseBody``'s iterator.
    func nextChunks(_ transfer: LoopBound<Transfer>, _ buffer: LoopBound<ResponseBodyBuffer>) async throws -> [Data]? {
        // In Swift 6 a closure in an actor method is isolated to the actor only if it captures
        // `self`. Without the call to `takeChunks` this one captured nothing isolated, so it ran
        // on the global executor and touched the loop-confined buffer from a second thread.
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                takeChunks(transfer.value, buffer.value, continuation)
            }
        } onCancel: { [loop] in
            loop.execute { transfer.value.cancel(with: CancellationError()) }
        }
    }

    private func takeChunks(_ transfer: Transfer, _ buffer: ResponseBodyBuffer,
                            _ continuation: UnsafeContinuation<[Data]?, any Error>) {
        transfer.nextChunks(for: buffer, continuation: continuation)
    }
}
