/// How the loop waits for IO. ``epoll`` is the default; ``multiPoll`` is kept for the comparison
/// in `Docs/Architecture.md`.
public enum LoopBackend: Sendable, Hashable {
    /// libcurl's socket interface (`CURLMOPT_SOCKETFUNCTION`, `curl_multi_socket_action`) over epoll.
    case epoll
    /// `curl_multi_perform` + `curl_multi_poll`, woken by `curl_multi_wakeup`.
    case multiPoll
}
