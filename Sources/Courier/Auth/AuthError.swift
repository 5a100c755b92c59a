/// Obtaining credentials failed. Tokens, keys and secrets never appear in it.
///
/// ```swift
/// do { … } catch AuthError.invalidGrant {
///     // the refresh token was revoked or expired: the user must sign in again
/// } catch let error as AuthError where error == .transport {
///     // the token endpoint could not be reached: worth retrying later
/// }
/// ```
public struct AuthError: CodedError, Hashable {
    enum Code: String, Sendable {
        case invalidGrant, invalidClient, tokenEndpoint, transport, invalidCredentials, insecureEndpoint, signing, cancelled
        case noCredentials, unsupportedCredentials, permissionDenied, metadataServer, universeMismatch
        case accessDenied, stateMismatch, signInTimedOut, authorizationRefused, subjectTokenSource
    }

    let code: Code
    /// The OAuth `error` code from the token endpoint (`invalid_grant`, `invalid_scope` …).
    public let oauthError: String?
    /// What went wrong: the endpoint's `error_description` or Courier's words.
    public let message: String
    /// The token endpoint's HTTP status.
    public let status: Int?
    /// The failure behind ``transport``: the ``TransportError`` (or other error) of the request.
    public let underlyingError: (any Error)?

    init(_ code: Code, message: String, oauthError: String? = nil, status: Int? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.oauthError = oauthError
        self.status = status
        underlyingError = underlying
    }

    /// The refresh token or assertion was rejected (revoked, expired, wrong audience): signing in again is needed.
    public static let invalidGrant = AuthError(.invalidGrant, message: "")
    /// The client id or secret was rejected.
    public static let invalidClient = AuthError(.invalidClient, message: "")
    /// The token endpoint answered with another error (a 5xx, an unexpected body).
    public static let tokenEndpoint = AuthError(.tokenEndpoint, message: "")
    /// The token endpoint could not be reached (see the underlying ``TransportError`` in the message).
    public static let transport = AuthError(.transport, message: "")
    /// A key file or credentials file is missing or malformed.
    public static let invalidCredentials = AuthError(.invalidCredentials, message: "")
    /// A token endpoint that is not https (loopback excepted): credentials would travel in clear text.
    public static let insecureEndpoint = AuthError(.insecureEndpoint, message: "")
    /// Signing the JWT failed.
    public static let signing = AuthError(.signing, message: "")
    /// The task waiting for the token was cancelled (the refresh goes on for other waiters).
    public static let cancelled = AuthError(.cancelled, message: "")
    /// Application Default Credentials found nothing; the message names every place looked at.
    public static let noCredentials = AuthError(.noCredentials, message: "")
    /// A credentials file of a kind Courier does not implement (an AWS environment other than
    /// `aws1`, a type it does not know), or ID tokens asked of credentials that cannot make them.
    public static let unsupportedCredentials = AuthError(.unsupportedCredentials, message: "")
    /// IAM refused: the caller may not impersonate the service account (a 403 from IAM Credentials).
    public static let permissionDenied = AuthError(.permissionDenied, message: "")
    /// The metadata server answered with something that is not a token (or not as the metadata
    /// server: without `Metadata-Flavor: Google`).
    public static let metadataServer = AuthError(.metadataServer, message: "")
    /// The credentials belong to another universe than the service
    /// (``ServiceActor/Configuration/universeDomain`` against ``Authorizer/universeDomain(context:)``):
    /// the request was not sent, so its credentials went nowhere they are not good for.
    public static let universeMismatch = AuthError(.universeMismatch, message: "")

    /// The person declined the consent page (`access_denied`), in the browser or on the device flow's page.
    public static let accessDenied = AuthError(.accessDenied, message: "")
    /// The sign-in timed out, and only redirects with a `state` it did not send reached its
    /// loopback listener (a stale tab, or a forged request): each was refused, nothing was
    /// exchanged, and the message counts them. Such a redirect does not end a sign-in.
    public static let stateMismatch = AuthError(.stateMismatch, message: "")
    /// Nobody completed the sign-in in time: the browser's redirect did not come, or the
    /// device code expired (`expired_token`).
    public static let signInTimedOut = AuthError(.signInTimedOut, message: "")
    /// The authorization server refused the sign-in for another reason (`invalid_scope`,
    /// `invalid_request` …, in ``oauthError``).
    public static let authorizationRefused = AuthError(.authorizationRefused, message: "")

    /// Workload identity federation's subject token could not be had: its executable failed,
    /// timed out or reported an error; AWS's metadata or credentials were missing.
    public static let subjectTokenSource = AuthError(.subjectTokenSource, message: "")

    /// Whether trying again later may succeed.
    public var isTransient: Bool {
        code == .transport || ((code == .tokenEndpoint || code == .metadataServer) && (status ?? 500) >= 500)
    }

    public var description: String {
        var text = "AuthError.\(code.rawValue)"
        if let oauthError { text += " (\(oauthError))" }
        if let status { text += " [HTTP \(status)]" }
        return message.isEmpty ? text : "\(text): \(message)"
    }
}
