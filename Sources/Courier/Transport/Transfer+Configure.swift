import CCurl
import Foundation

extension Transfer {
    /// What a plain GET leaves on a handle besides its per-request options: equal profiles
    /// mean equal option sets, so the handle can be reused without `curl_easy_reset` and a
    /// dozen setopts (a measurable share of a small request's CPU; Docs/Performance.md).
    ///
    /// The transport settings are not part of it: a handle never leaves its multi handle's
    /// pool, and the multi's settings are fixed for its life.
    struct ReuseProfile: Equatable {
        var isHTTPS: Bool
    }

    /// Sets every option for this request: only the per-request ones when the handle still
    /// holds a plain GET's options of the same profile, all of them on a reset handle otherwise.
    func configure(_ handle: EasyHandle) throws(TransportError) {
        // Only a plain GET (no body, no file, no custom method, no CA of its own) leaves options
        // worth keeping; the others' handles are reset when the pool takes them back.
        let profile = request.method == .get && request.body.isEmpty && fileOutput == nil && request.idempotency != .never
            && request.trustedCAPath == nil
            ? ReuseProfile(isHTTPS: target.isHTTPS)
            : nil
        if let kept = handle.profile {
            if kept == profile {
                try configurePerRequest(handle)
                return
            }
            handle.reset()
        }
        try configureEverything(handle)
        handle.profile = profile
        multi.lastProfile = profile
    }

    /// The options that differ between two plain GETs of one profile.
    /// (The callbacks' pointers name the handle, which stays the same: see ``EasyHandle/transfer``.)
    private func configurePerRequest(_ handle: EasyHandle) throws(TransportError) {
        handle.errorBuffer[0] = 0
        try handle.setURL(request.url.absoluteString)
        try configureHeaders(handle)
    }

    private func configureEverything(_ handle: EasyHandle) throws(TransportError) {
        try handle.setURL(request.url.absoluteString)
        var own: TLSConfiguration?
        if let path = request.trustedCAPath {
            own = multi.settings.tls
            own?.caBundlePath = path
        }
        try Self.configureCommon(handle, multi, isHTTPS: target.isHTTPS, tls: own)
        try configureMethodAndBody(handle)
        try configureHeaders(handle)
    }

    /// Gives a handle made ahead (``EasyHandlePool``'s spares) the options of `profile`, so a plain
    /// GET of that profile that takes it sets only its per-request ones. Leaves it reset if libcurl
    /// refuses one.
    static func prepare(_ handle: EasyHandle, _ multi: CurlMulti, as profile: ReuseProfile) {
        do {
            try configureCommon(handle, multi, isHTTPS: profile.isHTTPS, tls: nil)
            handle.profile = profile
        } catch {
            handle.reset()
        }
    }

    /// The options that depend on the service's settings and the request's profile, not on the
    /// request itself: every transfer has them. `tls` is a request's own TLS settings, nil for
    /// the service's.
    private static func configureCommon(_ handle: EasyHandle, _ multi: CurlMulti, isHTTPS: Bool,
                                        tls: TLSConfiguration?) throws(TransportError) {
        let settings = multi.settings
        // The handle, for the callbacks that every transfer has; see ``EasyHandle/transfer``.
        let unretained = Unmanaged.passUnretained(handle).toOpaque()

        try handle.set(CURLOPT_PRIVATE, pointer: unretained)
        try handle.set(CURLOPT_ERRORBUFFER, pointer: handle.errorBuffer)
        try handle.set(CURLOPT_NOSIGNAL, true)
        // http and https only, for the request and every redirect (libcurl checks a redirect
        // against this set too, so no CURLOPT_REDIR_PROTOCOLS is needed).
        try handle.allowHTTPOnly()
        // The path goes on the wire as the request has it. libcurl otherwise removes dot segments
        // (RFC 3986 §5.2.4), and from 8.13.0 percent-encoded ones too: a path parameter "..",
        // which Courier sends as %2E%2E, then named the parent (DELETE …/b/b/o/%2E%2E was sent as
        // DELETE …/b/b, the bucket), and a signed URL's path would differ from the signed one.
        try handle.set(CURLOPT_PATH_AS_IS, true)
        try handle.set(CURLOPT_TCP_KEEPALIVE, true)
        courier_easy_setopt_data_cb(handle.raw, CURLOPT_WRITEFUNCTION, Transfer.writeCallback)
        try handle.set(CURLOPT_WRITEDATA, pointer: unretained)
        courier_easy_setopt_data_cb(handle.raw, CURLOPT_HEADERFUNCTION, Transfer.headerCallback)
        try handle.set(CURLOPT_HEADERDATA, pointer: unretained)
        multi.configureSocketCallbacks(handle)
        courier_easy_setopt_prereq_cb(handle.raw, Transfer.prerequestCallback)
        try handle.set(CURLOPT_PREREQDATA, pointer: unretained)
        // No timeout option: Courier keeps the connect, total and idle timeouts itself
        // (CurlMulti's deadlines and idle sweep), so none of them costs libcurl a timer.

        if settings.followRedirects {
            try handle.set(CURLOPT_FOLLOWLOCATION, true)
            try handle.set(CURLOPT_MAXREDIRS, settings.maxRedirects)
        }
        // No CURLOPT_ACCEPT_ENCODING: libcurl never decodes (``ContentDecoder``).
        switch settings.proxy {
        case .direct?:
            try handle.set(CURLOPT_NOPROXY, "*")
        case .through(let url, let excluding)?:
            try handle.set(CURLOPT_PROXY, url)
            try handle.set(CURLOPT_NOPROXY, excluding)
        case nil:
            break
        }
        switch settings.httpVersion {
        case .http1_1:
            try handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        case .http2:
            try handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            // Waiting to multiplex pays only where ALPN tells soon whether it can. On plain http
            // curl would learn "no" from the first response, so a slow first request (a long
            // poll) would hold every other request to that host behind it.
            if isHTTPS { try handle.set(CURLOPT_PIPEWAIT, true) }
        case .http2PriorKnowledge:
            try handle.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE))
            try handle.set(CURLOPT_PIPEWAIT, true)
        }
        // A request's own TLS settings differ from the defaults: they name a CA bundle.
        if let tls {
            try configureTLS(handle, tls)
        } else if isHTTPS || !multi.tlsIsDefault {
            try configureTLS(handle, multi.settings.tls)
        }
    }

    private var isFileDownload: Bool { fileOutput != nil }

    /// The body is decoded (automatic decompression): not for a download to a file, which keeps
    /// the bytes as the server stored them, nor for a request with a `Range`, whose part of a
    /// coded body could never decode whole (Go's transport offers no gzip for one either).
    /// Courier decodes what it offers itself (``ContentDecoder/offer``), and what a request that
    /// makes its own offer gets in those codings; it fails a body whose coding did not end.
    var offersDecoding: Bool {
        multi.settings.automaticDecompression && !isFileDownload && !request.keepsContentEncoding
            && (request.headers.isEmpty || request.headers["Range"] == nil)
    }

    /// The request makes its own offer: a coding in it Courier does not decode arrives as sent.
    var namesOwnAcceptEncoding: Bool {
        !request.headers.isEmpty && request.headers["Accept-Encoding"] != nil
    }

    private func configureMethodAndBody(_ handle: EasyHandle) throws(TransportError) {
        let method = request.method
        let source = try RequestBodySource.open(request.body)
        requestBody = source
        let unretained = Unmanaged.passUnretained(handle).toOpaque() // see ``EasyHandle/transfer``

        if method == .head {
            try handle.set(CURLOPT_NOBODY, true)
            return
        }
        guard let source else {
            switch method {
            case .get: break
            case .post:
                // An empty POST still needs Content-Length: 0, and POSTFIELDS keeps curl off stdin.
                try handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
                try handle.set(CURLOPT_POSTFIELDS, "")
            case .put, .patch:
                try handle.set(CURLOPT_UPLOAD, true)
                try handle.set(CURLOPT_INFILESIZE_LARGE, offset: 0)
                courier_easy_setopt_data_cb(handle.raw, CURLOPT_READFUNCTION, Transfer.readCallback)
                try handle.set(CURLOPT_READDATA, pointer: unretained)
                if method != .put { try handle.set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
            default:
                try handle.set(CURLOPT_CUSTOMREQUEST, method.rawValue)
            }
            return
        }

        courier_easy_setopt_data_cb(handle.raw, CURLOPT_READFUNCTION, Transfer.readCallback)
        try handle.set(CURLOPT_READDATA, pointer: unretained)
        courier_easy_setopt_seek_cb(handle.raw, Transfer.seekCallback)
        try handle.set(CURLOPT_SEEKDATA, pointer: unretained)
        let length = source.length ?? -1 // -1: chunked transfer encoding
        if method == .post {
            try handle.set(CURLOPT_POST, true)
            try handle.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: length)
        } else {
            try handle.set(CURLOPT_UPLOAD, true)
            try handle.set(CURLOPT_INFILESIZE_LARGE, offset: length)
            if method != .put { try handle.set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
        }
        if let stream = source.streamBuffer {
            stream.onData = { [unowned self] in self.bodyDataArrived() }
            multi.startPump(for: request.body, into: stream)
        }
    }

    /// The request's header list, with the service's User-Agent and, when the response is
    /// decoded, Courier's `Accept-Encoding` (``ContentDecoder/offer``), each unless the request names its own.
    ///
    /// Both travel in the list, not as `CURLOPT_USERAGENT` and `CURLOPT_ACCEPT_ENCODING`'s
    /// header: libcurl formats those options into a header anew for every request (`aprintf`, a
    /// byte at a time), about 9,000 instructions per request for the User-Agent and 8,000 for
    /// Accept-Encoding (callgrind, Docs/Performance.md, "Decisions"). Courier decodes the codings it
    /// offers itself; libcurl decodes nothing.
    /// A request without headers of its own shares one of the multi handle's ready-made lists,
    /// so it builds none.
    private func configureHeaders(_ handle: EasyHandle) throws(TransportError) {
        let expectsBody = !request.body.isEmpty || request.method == .put || request.method == .patch
        let decoding = offersDecoding
        var list: UnsafeMutablePointer<curl_slist>?
        if request.headers.isEmpty && !expectsBody && !request.keepsContentEncoding {
            // Owned by the multi handle: the handle's headerList stays nil.
            list = decoding ? multi.defaultHeaderLists.decoding : multi.defaultHeaderLists.plain
        } else {
            var namesUserAgent = false
            var namesAcceptEncoding = false
            for field in request.headers {
                // "Name;" is curl's spelling for a header with an empty value ("Name:" would delete it).
                let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
                list = curl_slist_append(list, line)
                namesUserAgent = namesUserAgent || HTTPSyntax.namesEqual(field.name, "User-Agent")
                namesAcceptEncoding = namesAcceptEncoding || HTTPSyntax.namesEqual(field.name, "Accept-Encoding")
            }
            if !namesUserAgent, let line = multi.userAgentLine { list = curl_slist_append(list, line) }
            if decoding, !namesAcceptEncoding, let line = CurlGlobal.acceptEncodingLine { list = curl_slist_append(list, line) }
            if request.keepsContentEncoding, !namesAcceptEncoding { list = curl_slist_append(list, "Accept-Encoding: gzip") }
            if expectsBody {
                // 100-continue costs a round trip (or a 1 s stall with servers that ignore it).
                list = curl_slist_append(list, "Expect:")
            }
            handle.headerList = list
        }
        // Always set, nil included: a reused handle still points at its last transfer's freed list.
        try handle.set(CURLOPT_HTTPHEADER, pointer: list)
    }

    private static func configureTLS(_ handle: EasyHandle, _ tls: TLSConfiguration) throws(TransportError) {
        try handle.set(CURLOPT_SSL_VERIFYPEER, tls.verifyPeer)
        try handle.set(CURLOPT_SSL_VERIFYHOST, tls.verifyPeer ? 2 : 0)
        if let path = tls.caBundlePath { try handle.set(CURLOPT_CAINFO, path) }
        if let path = tls.clientCertificatePath { try handle.set(CURLOPT_SSLCERT, path) }
        if let path = tls.clientKeyPath { try handle.set(CURLOPT_SSLKEY, path) }
        if let password = tls.clientKeyPassword { try handle.set(CURLOPT_KEYPASSWD, password) }
    }
}
