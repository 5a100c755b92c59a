import CCurl

/// One TLS session cache for every easy handle of a multi handle: a libcurl share handle that
/// shares `CURL_LOCK_DATA_SSL_SESSION` only.
///
/// Without it, libcurl keeps TLS sessions per easy handle. A handle that serves one transfer
/// (libcurl 7.84.0 to 8.0.1, ``Libcurl/handlesAreReusable``) then never resumes a session, and
/// a pooled one resumes only the sessions it made itself, so a new connection to a host
/// Courier has already met pays a full handshake. With it, every new connection of a service
/// offers the host's last session (Docs/Performance.md).
///
/// Loop-confined, as the handles that use it, so it needs no lock callbacks. Each
/// ``EasyHandle`` attached to it holds it: libcurl refuses to free a share that a handle still
/// uses (`CURLSHE_IN_USE`), and a handle may outlive its multi handle's `close()` by a moment.
final class TLSSessionCache {
    let raw: UnsafeMutableRawPointer

    init?() {
        guard let raw = courier_share_tls_sessions() else { return nil }
        self.raw = raw
    }

    deinit { curl_share_cleanup(raw) }
}
