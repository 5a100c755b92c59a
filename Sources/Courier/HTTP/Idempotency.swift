/// Whether a request may be sent again after it may have reached the server.
///
/// Retrying a request the server already received repeats its effect: a second POST creates a
/// second object. So the pipeline re-sends a request that may have arrived only when repeating it
/// is harmless, as Google's own libraries decide (google-cloud-go's idempotency-aware retry):
///
/// - ``automatic`` (the default): GET, HEAD, PUT, DELETE and OPTIONS are idempotent; POST and PATCH
///   are when they carry a precondition (`If-Match`, `ifGenerationMatch`, `ifMetagenerationMatch`, …),
///   which makes a repeat fail instead of writing twice.
/// - ``always``: the caller vouches for it (a POST with a client-chosen ID, a token request).
/// - ``never``: never re-sent once it may have arrived, whatever the method.
///
/// A failure before any byte was sent (a refused connect, DNS, the TLS handshake) is retried for
/// every method: the server cannot have seen the request.
public enum Idempotency: Sendable, Hashable {
    case automatic
    case always
    case never
}

extension HTTPRequest {
    /// Whether repeating this request is harmless (see ``Idempotency``).
    public var isIdempotent: Bool {
        switch idempotency {
        case .always: true
        case .never: false
        case .automatic: method.isIdempotent || hasPrecondition
        }
    }

    /// Header and URL parameters that make a write conditional, so that a repeat fails instead of
    /// applying twice (RFC 9110 §13 and Google's generation and metageneration preconditions).
    static let preconditionHeaders = ["If-Match", "If-None-Match", "If-Unmodified-Since", "x-goog-if-generation-match",
                                      "x-goog-if-metageneration-match"]
    static let preconditionParameters: Set<String> = [
        "ifgenerationmatch", "ifmetagenerationmatch", "ifsourcegenerationmatch", "ifsourcemetagenerationmatch",
    ]

    /// Whether the request carries a precondition.
    var hasPrecondition: Bool {
        if Self.preconditionHeaders.contains(where: { headers[$0] != nil }) { return true }
        guard let query = url.query, query.contains("if") || query.contains("If") else { return false }
        return query.split(separator: "&").contains { pair in
            Self.preconditionParameters.contains(pair.prefix { $0 != "=" }.lowercased())
        }
    }
}
