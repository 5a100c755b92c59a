import CCurl

/// One libcurl easy handle and the error buffer libcurl writes its detail messages into.
///
/// Loop-confined: created, configured, reset and destroyed on the event loop thread only, so its
/// fields skip the runtime's exclusivity check, as ``Transfer``'s do.
final class EasyHandle: DeadlineScheduled {
    let raw: UnsafeMutableRawPointer
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The options a plain GET left on this handle, kept instead of reset so the next plain GET
    /// with the same profile sets only its per-request options (see `Transfer.configure`).
    @exclusivity(unchecked) var profile: Transfer.ReuseProfile?
    /// The request header list curl reads while a transfer holds this handle, when the transfer
    /// built one of its own; freed when the handle goes back (``releaseHeaderList()``). Here, not
    /// in the transfer: only a transfer that holds a handle has one.
    @exclusivity(unchecked) var headerList: UnsafeMutablePointer<curl_slist>?
    /// The transfer that holds this handle, set from taking it to giving it back. curl's
    /// callbacks and `CURLOPT_PRIVATE` point at the handle, not at the transfer, so those four
    /// pointer options are set once per handle rather than once per request (see
    /// Docs/Performance.md). Unretained: the multi handle's retain keeps an attached transfer alive.
    @exclusivity(unchecked) var transfer: Unmanaged<Transfer>?
    /// The URL curl holds for this handle (`CURLOPT_URL`), so a request to the same URL as the
    /// handle's last one does not set it again: curl copies the string and frees the old one,
    /// about 160 instructions a request (Docs/PerformanceDecisions.md). curl starts each transfer from
    /// this URL, not from where the last one was redirected to.
    @exclusivity(unchecked) private(set) var url: String?
    /// Its places in the multi handle's deadline schedules while its transfer is attached
    /// (``DeadlineSchedule``). Here, not in the transfer: only an attached transfer has deadlines,
    /// and a waiting query's memory stays as it was.
    @exclusivity(unchecked) var deadlineLinks = DeadlineLinks<EasyHandle>()
    /// Decodes the body of the transfer that holds this handle, when it is gzip or deflate and
    /// Courier offered to decode it (``ContentDecoder``); made at the body's first byte, dropped
    /// when the handle goes back. Here, not in the transfer, for the same reason as ``deadlineLinks``.
    @exclusivity(unchecked) var decoder: ContentDecoder?
    /// The TLS session cache this handle uses (`CURLOPT_SHARE`), held so it outlives the handle.
    /// Attached once, when the handle is made: `curl_easy_reset` keeps it (it is not an option
    /// of `data->set`, which the reset clears).
    let tlsSessions: TLSSessionCache?

    /// A new handle using `tlsSessions`; without one (libcurl could not make it, or would not
    /// attach it), the handle keeps its own sessions, as libcurl does by default.
    init?(sharing tlsSessions: TLSSessionCache?) {
        guard let raw = curl_easy_init() else { return nil }
        self.raw = raw
        if let tlsSessions, courier_easy_setopt_ptr(raw, CURLOPT_SHARE, tlsSessions.raw) == CURLE_OK {
            self.tlsSessions = tlsSessions
        } else {
            self.tlsSessions = nil
        }
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
        LiveObjects.created(.easyHandle)
    }

    deinit {
        LiveObjects.destroyed(.easyHandle)
        curl_easy_cleanup(raw)
        releaseHeaderList()
        errorBuffer.deallocate()
    }

    /// Frees the transfer's header list, once curl no longer holds the handle.
    func releaseHeaderList() {
        if let headerList {
            curl_slist_free_all(headerList)
            self.headerList = nil
        }
    }

    /// Clears every option (connections stay cached in the multi handle) and re-arms the error buffer.
    func reset() {
        curl_easy_reset(raw)
        errorBuffer[0] = 0
        profile = nil
        url = nil
    }

    var errorDetail: String { String(cString: errorBuffer) }

    // Option setters. A failing setopt means libcurl lacks a feature or memory; surface it as a typed error.

    func set(_ option: CURLoption, _ value: Int) throws(TransportError) {
        try check(courier_easy_setopt_long(raw, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws(TransportError) {
        try set(option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, offset value: Int64) throws(TransportError) {
        try check(courier_easy_setopt_off(raw, option, curl_off_t(value)), option)
    }

    /// Sets `CURLOPT_URL` unless the handle holds that URL already.
    func setURL(_ value: String) throws(TransportError) {
        guard value != url else { return }
        url = nil // kept only once curl took it
        try set(CURLOPT_URL, value)
        url = value
    }

    /// libcurl copies string options, so the Swift string only needs to live for the call.
    func set(_ option: CURLoption, _ value: String) throws(TransportError) {
        try check(value.withCString { courier_easy_setopt_ptr(raw, option, $0) }, option)
    }

    func set(_ option: CURLoption, pointer value: UnsafeRawPointer?) throws(TransportError) {
        try check(courier_easy_setopt_ptr(raw, option, value), option)
    }

    /// Limits the handle to http and https, redirects included (`courier_easy_allow_http_only`).
    func allowHTTPOnly() throws(TransportError) {
        try check(courier_easy_allow_http_only(raw), courier_option_protocols)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(TransportError) {
        guard code == CURLE_OK else {
            throw TransportError(.invalidRequest, curlCode: Int(code.rawValue),
                                 message: "libcurl refused option \(option.rawValue): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}
