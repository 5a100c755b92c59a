import CCurl
import Foundation

extension Transfer {
    /// The final response's status line and headers, read from curl (redirect hops excluded).
    func readHead() -> HTTPResponseHead {
        guard let easy else { return HTTPResponseHead(status: Int(status), url: request.url) }
        var code = 0
        courier_easy_getinfo_long(easy.raw, CURLINFO_RESPONSE_CODE, &code)
        var versionCode = 0
        courier_easy_getinfo_long(easy.raw, CURLINFO_HTTP_VERSION, &versionCode)

        let headers = receivedHeaders.headers // collected by the header callback

        var url = request.url
        var redirects = 0
        courier_easy_getinfo_long(easy.raw, CURLINFO_REDIRECT_COUNT, &redirects)
        if redirects > 0 {
            var effective: UnsafeMutablePointer<CChar>?
            courier_easy_getinfo_string(easy.raw, CURLINFO_EFFECTIVE_URL, &effective)
            if let effective, let parsed = URL(string: String(cString: effective)) { url = parsed }
        }
        return HTTPResponseHead(status: code, headers: headers, version: Self.version(versionCode), url: url)
    }

    private static func version(_ code: Int) -> HTTPVersion {
        switch code {
        case Int(CURL_HTTP_VERSION_1_0): .http1_0
        case Int(CURL_HTTP_VERSION_2_0): .http2
        case Int(CURL_HTTP_VERSION_3): .http3
        default: .http1_1
        }
    }
}
