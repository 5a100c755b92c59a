import CCurl

extension TransportError {
    /// Maps a libcurl result to its kind, keeping curl's own words and code.
    init(curl result: CURLcode, detail: String, url: String) {
        let code: Code
        switch result {
        case CURLE_OPERATION_TIMEDOUT: code = .timedOut
        case CURLE_COULDNT_CONNECT: code = .connectionFailed
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: code = .hostNotFound
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT,
             CURLE_USE_SSL_FAILED:
            code = .tlsFailure
        // SEND_FAIL_REWIND: the connection broke mid-body and curl, wanting to resend on a new one,
        // could not rewind a streamed body (a reset during a resumable chunk, found by `make netem`).
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_HTTP2,
             CURLE_HTTP2_STREAM, CURLE_HTTP3, CURLE_SEND_FAIL_REWIND:
            code = .connectionLost
        case CURLE_TOO_MANY_REDIRECTS: code = .tooManyRedirects
        case CURLE_FILESIZE_EXCEEDED: code = .bodyTooLarge
        case CURLE_URL_MALFORMAT: code = .invalidRequest
        case CURLE_READ_ERROR, CURLE_WRITE_ERROR: code = .fileError
        // Requests are validated as http(s) before sending, so an unsupported protocol can only
        // be the server's reply (curl's "Received HTTP/0.9 when not allowed").
        // BAD_FUNCTION_ARGUMENT is libcurl's answer to a response header that folds onto no
        // header (curl/curl#11605): the options are set before the transfer, so here it is the reply's.
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT:
            code = .protocolError
        case CURLE_ABORTED_BY_CALLBACK: code = .cancelled
        default: code = .unknown
        }
        let summary = String(cString: curl_easy_strerror(result))
        let message = detail.isEmpty || detail == summary ? summary : "\(summary): \(detail)"
        // libcurl reports an oversized header block as a generic failure; give it its own kind.
        let finalCode = message.contains("header") && message.contains("too") ? Code.headerTooLarge : code
        self.init(finalCode, curlCode: Int(result.rawValue), message: message, url: url)
    }
}
