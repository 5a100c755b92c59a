import CCurl
import Foundation

/// libcurl's callbacks. Each is a capture-free closure, so it converts to a C function pointer.
/// Their user data is the easy handle, whose ``EasyHandle/transfer`` is the transfer holding it:
/// the handle stays the same across requests, so these pointer options are set once per handle.
///
/// They borrow handle and transfer with `_withUnsafeGuaranteedRef` rather than taking them with
/// `takeUnretainedValue()`, which retains and releases around every call: ten of each per small
/// response, one header line at a time (callgrind, Docs/Performance.md, "Decisions"). The multi handle's
/// +1 retain on an attached transfer, and the pool's on the handle, guarantee the references.
extension Transfer {
    /// The transfer holding the easy handle that `userdata` names (no reference counting).
    @inline(__always)
    static func holder(_ userdata: UnsafeMutableRawPointer?) -> Unmanaged<Transfer> {
        Unmanaged<EasyHandle>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.transfer! }
    }

    static let writeCallback: courier_data_cb = { buffer, size, count, userdata in
        holder(userdata)._withUnsafeGuaranteedRef { $0.received(UnsafeRawBufferPointer(start: buffer, count: size * count)) }
    }

    /// One header line of the response (status line and blank line included), as curl parsed it.
    static let headerCallback: courier_data_cb = { buffer, size, count, userdata in
        let length = size * count
        holder(userdata)._withUnsafeGuaranteedRef { $0.receivedHeaderLine(UnsafeRawBufferPointer(start: buffer, count: length)) }
        return length
    }

    static let readCallback: courier_data_cb = { buffer, size, count, userdata in
        holder(userdata)._withUnsafeGuaranteedRef { $0.send(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count)) }
    }

    static let seekCallback: courier_seek_cb = { userdata, offset, origin in
        holder(userdata)._withUnsafeGuaranteedRef { transfer in
            guard origin == SEEK_SET, transfer.requestBody?.rewind(to: Int64(offset)) ?? (offset == 0) else {
                return CURL_SEEKFUNC_CANTSEEK
            }
            return CURL_SEEKFUNC_OK
        }
    }

    /// Called when a connection is ready and the request is about to go out.
    static let prerequestCallback: courier_prereq_cb = { userdata, _, _, _, _ in
        Unmanaged<EasyHandle>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { easy in
            easy.transfer!._withUnsafeGuaranteedRef { transfer in
                // The connection is there, so its connect timeout is met; its idle time starts
                // here if curl did not start a connection for it (see CurlMulti.attach).
                if easy.deadlineLinks.connect.isScheduled { transfer.multi.connectionReady(easy) }
                if transfer.lastActivity == 0 { transfer.lastActivity = MonotonicClock.nanoseconds() }
                return transfer.requestWillBeSent() ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
            }
        }
    }

    /// Refuses curl's silent re-send of a request that is not idempotent (see
    /// ``TransferStateMachine/requestWillBeSent(idempotent:url:)``): the caller gets a typed
    /// `connectionLost`. An idempotent one goes out again, counted in the operation's tally so
    /// the pipeline announces it as the retry it is, and its handle is reset afterwards.
    func requestWillBeSent() -> Bool {
        switch machine.requestWillBeSent(idempotent: request.isIdempotent, url: request.url.absoluteString) {
        case .send: return true
        case .resend:
            resends.countResend()
            return true
        case .refuse: return false
        }
    }

    /// Collects the last response's header fields. Reading them here costs a fraction of
    /// `curl_easy_nextheader`, which rescans every header for each one it returns.
    private func receivedHeaderLine(_ line: UnsafeRawBufferPointer) {
        if receivedHeaders.receive(line) { machine.responseBegan() }
    }

    /// Body bytes from curl; returning less than `bytes.count` aborts the transfer.
    private func received(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = MonotonicClock.nanoseconds()
        if request.progress != nil { reportProgress(received: bytes.count) }
        if status == 0, let easy {
            var code = 0
            courier_easy_getinfo_long(easy.raw, CURLINFO_RESPONSE_CODE, &code)
            status = Int32(truncatingIfNeeded: code)
            if let value = receivedHeaders.contentEncoding, offersDecoding {
                switch ContentDecoder.decoding(of: value) {
                case .identity: break
                case .decode(let coding):
                    do throws(TransportError) {
                        easy.decoder = try ContentDecoder(coding)
                    } catch {
                        machine.abort(error)
                        return 0
                    }
                case .unsupported:
                    // A coding the request asked for itself (br, zstd) arrives as sent, its
                    // Content-Encoding kept, for the caller to decode (Go's transport and
                    // AsyncHTTPClient do the same); one Courier did not offer is an error.
                    guard namesOwnAcceptEncoding else {
                        machine.abort(ContentDecoder.unofferedError(value))
                        return 0
                    }
                }
            }
        }
        guard let decoder = easy?.decoder else { return take(bytes) ? bytes.count : 0 }
        do throws(TransportError) {
            return try decoder.decode(bytes) { take($0) } ? bytes.count : 0
        } catch {
            machine.abort(error)
            return 0
        }
    }

    /// Body bytes as the caller gets them (decoded); false aborts the transfer.
    private func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch machine.receive(byteCount: bytes.count, status: Int(status)) {
        case .append:
            if body.isEmpty { reserveBody() }
            body.append(bytes)
            return true
        case .deliver(let deliverHead, let pause):
            guard case .stream(let buffer) = sink else { return false }
            if deliverHead {
                let head = readHead()
                publishOutcome()
                buffer.deliverHead(head)
            }
            if buffer.append(Data(bytes)) { consumed(bytes.count) }
            if pause { setPaused(receive: true) }
            return true
        case .writeToFile:
            if let error = fileOutput?.write(bytes) {
                machine.abort(error)
                return false
            }
            return true
        case .abort:
            return false
        }
    }

    /// Pre-sizes the buffer from Content-Length so large bodies are not copied while growing.
    private func reserveBody() {
        guard let easy, case .buffered(let limit) = machine.delivery else { return }
        var length: curl_off_t = -1
        courier_easy_getinfo_off(easy.raw, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        if length > 0 && length <= limit { body.reserve(Int(length)) }
    }

    /// Request body bytes for curl.
    private func send(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lastActivity = MonotonicClock.nanoseconds()
        guard let requestBody else { return 0 }
        switch requestBody.read(into: buffer) {
        case .bytes(let count):
            if request.progress != nil { reportProgress(sent: count) }
            return count
        case .pause:
            pauseMask |= UInt8(courier_pause_send)
            return courier_readfunc_pause
        case .failed(let error):
            machine.abort(error)
            return courier_readfunc_abort
        }
    }
}
