import CourierSync
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension UserSignIn {
    /// Signs in with the system browser on this machine (RFC 8252's loopback redirect, with PKCE,
    /// RFC 7636).
    ///
    /// Listens on `127.0.0.1` on an ephemeral port, hands `open` the consent URL (`state`, an
    /// S256 `code_challenge`, the scopes, `access_type=offline`, `prompt=consent`), accepts the
    /// one redirect that carries the right `state`, answers the browser with a short page, and
    /// exchanges the code with its verifier. Nothing listens once this returns or throws.
    ///
    /// A redirect with another `state` (a stale tab, or any local process or web page that
    /// found the port) is answered 400 and believed in nothing, its code or error included, and
    /// the sign-in goes on waiting for its own: such a request cannot end it.
    ///
    /// - Parameters:
    ///   - timeout: How long the person has to consent.
    ///   - open: Shows the consent URL: by default ``openInSystemBrowser(_:)``.
    /// - Throws: ``AuthError/accessDenied`` when the person declines; ``AuthError/signInTimedOut``
    ///   when `timeout` passes, or ``AuthError/stateMismatch`` when it passes after only redirects
    ///   with another `state` came; `CancellationError` when the task is cancelled; the token
    ///   endpoint's errors from the exchange.
    public func withBrowser(timeout: Duration = .seconds(300),
                            open: @Sendable (URL) async throws -> Void = openInSystemBrowser) async throws -> UserCredentials {
        let listener = try LoopbackListener()
        defer { listener.close() }
        let pkce = PKCE()
        let redirect = LoopbackRedirect(redirectURI: "http://127.0.0.1:\(listener.port)/", state: PKCE.randomToken(bytes: 16))
        try await open(try consentURL(redirectURI: redirect.redirectURI, state: redirect.state, challenge: pkce.challenge))
        let outcome = try await listener.serve(timeout: timeout) { redirect.answer($0) }
        switch outcome {
        case nil:
            let refused = redirect.refused.withLock { $0 }
            guard refused == 0 else {
                throw AuthError(.stateMismatch, message: "no sign-in came back within \(timeout.seconds) s; \(refused) redirect(s) with "
                                    + "another state were refused (a stale tab, or a request this sign-in did not ask for)")
            }
            throw AuthError(.signInTimedOut, message: "no sign-in came back within \(timeout.seconds) s")
        case .failure(let error)?:
            throw error
        case .success(let code)?:
            return try await redeem([("grant_type", "authorization_code"), ("code", code), ("code_verifier", pkce.verifier),
                                     ("redirect_uri", redirect.redirectURI)], name: "oauth2.code")
        }
    }

    /// The consent page's URL for this sign-in.
    func consentURL(redirectURI: String, state: String, challenge: String) throws(AuthError) -> URL {
        try CredentialRequest.requireSecure(client.authorizationURL, what: "authorization endpoint")
        guard var components = URLComponents(url: client.authorizationURL, resolvingAgainstBaseURL: false) else {
            throw AuthError(.invalidCredentials, message: "the authorization URL cannot carry a query")
        }
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "client_id", value: client.clientID), URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "scope", value: scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state), URLQueryItem(name: "code_challenge", value: challenge),
            URLQueryItem(name: "code_challenge_method", value: PKCE.method),
            // A refresh token is the point of signing in: offline access, and consent asked again
            // (Google grants a refresh token only at consent).
            URLQueryItem(name: "access_type", value: "offline"), URLQueryItem(name: "prompt", value: "consent"),
        ]
        if let loginHint { items.append(URLQueryItem(name: "login_hint", value: loginHint)) }
        components.queryItems = items
        // URLComponents leaves `+` as is; a scope list's spaces become %20, which every server reads.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else { throw AuthError(.invalidCredentials, message: "the consent URL cannot be built") }
        return url
    }

    /// Shows `url` to the person: always printed on standard error (for a person on another
    /// screen to copy), and opened with the command in `BROWSER` when set (`%s` stands for the
    /// URL, else it comes last; the convention Python's `webbrowser` and `xdg-open` follow), else
    /// with `xdg-open` when there is a display.
    @Sendable public static func openInSystemBrowser(_ url: URL) async throws {
        FileHandle.standardError.write(Data("Sign in with your browser: \(url.absoluteString)\n".utf8))
        let environment = ProcessInfo.processInfo.environment
        var command: [String]
        if let browser = environment["BROWSER"]?.split(separator: ":").first.map(String.init), !browser.isEmpty {
            command = browser.split(whereSeparator: \.isWhitespace).map(String.init)
            if let index = command.firstIndex(where: { $0.contains("%s") }) {
                command[index] = command[index].replacingOccurrences(of: "%s", with: url.absoluteString)
            } else {
                command.append(url.absoluteString)
            }
        } else if environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil {
            command = ["xdg-open", url.absoluteString]
        } else {
            return
        }
        spawnDetached(command)
    }

    /// Starts `command` and reaps it on a thread of its own: a terminal browser may run for minutes.
    private static func spawnDetached(_ command: [String]) {
        guard let program = command.first else { return }
        var pid: pid_t = 0
        var argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, program, nil, nil, &argv, environ) == 0 else {
            FileHandle.standardError.write(Data("(could not start \(program); open the URL yourself)\n".utf8))
            return
        }
        let child = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            _ = waitpid(child, &status, 0)
        }
    }
}

/// The redirect a loopback sign-in waits for: at its path, with its `state`, carrying a code
/// or the provider's error. Other paths (a browser's `/favicon.ico`) get a 404 and change
/// nothing; a redirect with another `state` gets a 400, is counted, and changes nothing either.
struct LoopbackRedirect: Sendable {
    let redirectURI: String
    let state: String
    /// Redirects refused for their `state`.
    let refused = LockedValue(0)

    func answer(_ request: LoopbackRequest) -> LoopbackAnswer<Result<String, AuthError>> {
        guard request.method == "GET", let components = URLComponents(string: request.target), components.path == "/" else {
            return LoopbackAnswer(status: 404, page: "Not found", outcome: nil)
        }
        let items = components.queryItems ?? []
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        // The state first: an error or a code in a redirect this sign-in did not ask for is not trusted.
        // Not an outcome: ending the sign-in here would let any local request cancel it.
        guard value("state") == state else {
            refused.withLock { $0 += 1 }
            return LoopbackAnswer(status: 400, page: "This answer is not for the sign-in that is waiting; it goes on waiting for its own.",
                                  outcome: nil)
        }
        if let error = value("error") {
            let described = value("error_description") ?? error
            let code: AuthError.Code = error == "access_denied" ? .accessDenied : .authorizationRefused
            return LoopbackAnswer(status: 200, page: "Sign-in was not completed (\(error)). You can close this window.",
                                  outcome: .failure(AuthError(code, message: described, oauthError: error)))
        }
        guard let code = value("code"), !code.isEmpty else {
            return LoopbackAnswer(status: 400, page: "Sign-in failed: the answer carries no code.",
                                  outcome: .failure(AuthError(.authorizationRefused, message: "the redirect carries neither a code nor an error")))
        }
        return LoopbackAnswer(status: 200, page: "Signed in. You can close this window and return to the terminal.", outcome: .success(code))
    }
}
