import Foundation

extension ServiceActor {
    /// Sends `request` and returns the response with its body in memory.
    ///
    /// The body is buffered up to ``Configuration/maxResponseBodySize``; a larger one fails with
    /// ``TransportError/bodyTooLarge`` and memory never grows past the limit. A non-2xx status
    /// is a response, not an error.
    ///
    /// Cancelling the calling task removes the transfer from the multi handle on the loop's next
    /// turn and throws `CancellationError`; a task cancelled before the transfer starts never
    /// opens a connection.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await send(request, requestID: nil)
    }

    /// `send`, with the transfer registered under a query's request ID so that
    /// ``cancel(requestID:)`` reaches it.
    func send(_ request: HTTPRequest, requestID: String?) async throws -> HTTPResponse {
        try request.validate()
        try checkRunning()
        let transfer = Transfer(id: makeTransferID(), request: request,
                                delivery: .buffered(limit: configuration.maxResponseBodySize),
                                sink: nil, timeouts: timeouts(for: request), multi: multi)
        if let requestID {
            guard requests.attach(transfer: transfer.id, to: requestID) else { throw CancellationError() }
        }
        defer { if let requestID { _ = requests.attach(transfer: nil, to: requestID) } }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                transfer.install(.response(continuation))
                submit(transfer)
            }
        } onCancel: { [loop, bound = LoopBound(transfer)] in
            loop.execute { bound.value.cancel(with: CancellationError()) }
        }
    }

    /// Sends `request` and writes a 2xx body straight to `file`, never holding it in memory.
    ///
    /// The file is created or truncated at the first body byte of a 2xx response; any other
    /// status leaves the file untouched and returns its (bounded) body in the response. With
    /// `append`, bytes are added to an existing file, as a `Range` resume needs.
    public func download(_ request: HTTPRequest, to file: URL, append: Bool = false) async throws -> HTTPResponse {
        try request.validate()
        try checkRunning()
        let transfer = Transfer(id: makeTransferID(), request: request, delivery: .file(errorLimit: 1 << 20),
                                sink: nil, timeouts: timeouts(for: request), multi: multi)
        transfer.fileOutput = FileOutput(path: file.path, append: append)
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                transfer.install(.response(continuation))
                submit(transfer)
            }
        } onCancel: { [loop, bound = LoopBound(transfer)] in
            loop.execute { bound.value.cancel(with: CancellationError()) }
        }
    }

    /// Sends `request` and returns as soon as the response head arrives; the body follows as an
    /// `AsyncSequence` of chunks.
    ///
    /// Receiving pauses (`curl_easy_pause`) while more than 1 MiB waits unread, so a slow
    /// consumer holds the server back instead of filling memory. Dropping the body before its
    /// end cancels the transfer.
    public func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        try request.validate()
        try checkRunning()
        let buffer = ResponseBodyBuffer()
        let transfer = Transfer(id: makeTransferID(), request: request,
                                delivery: .streaming(highWater: 1 << 20, lowWater: 256 << 10),
                                sink: nil, timeouts: timeouts(for: request), multi: multi)
        let bound = LoopBound(transfer)
        let boundBuffer = LoopBound(buffer)
        let head = try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                transfer.install(.stream(boundBuffer.value))
                boundBuffer.value.awaitHead(continuation)
                submit(transfer)
            }
        } onCancel: { [loop] in
            loop.execute { bound.value.cancel(with: CancellationError()) }
        }
        let body = HTTPResponseBody(handle: ResponseStreamHandle(service: self, transfer: bound, buffer: boundBuffer))
        return HTTPStreamingResponse(head: head, body: body)
    }

    /// Hands `transfer` to the multi handle unless it is already resolved or its task cancelled.
    private func submit(_ transfer: Transfer) {
        if transfer.machine.isFinished { return }
        if Task.isCancelled {
            transfer.cancel(with: CancellationError())
        } else {
            multi.submit(transfer)
        }
    }

    /// The next chunk of a streamed body; called by ``HTTPResponseBody``'s iterator.
    func nextChunk(_ transfer: LoopBound<Transfer>, _ buffer: LoopBound<ResponseBodyBuffer>) async throws -> Data? {
        // In Swift 6 a closure in an actor method is isolated to the actor only if it captures
        // `self`. Without the call to `takeChunk` this one captured nothing isolated, so it ran
        // on the global executor and touched the loop-confined buffer from a second thread.
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { continuation in
                takeChunk(transfer.value, buffer.value, continuation)
            }
        } onCancel: { [loop] in
            loop.execute { transfer.value.cancel(with: CancellationError()) }
        }
    }

    private func takeChunk(_ transfer: Transfer, _ buffer: ResponseBodyBuffer,
                           _ continuation: UnsafeContinuation<Data?, any Error>) {
        transfer.nextChunk(for: buffer, continuation: continuation)
    }
}
