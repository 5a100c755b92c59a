import Foundation

/// An OAuth client that signs users in: its ID and secret, and the provider's endpoints.
///
/// A desktop or command-line tool's client comes from the `client_secret.json` the Google Cloud
/// console downloads for an OAuth client of type "Desktop app" (or "TVs and limited input
/// devices" for the device flow). Such a client's secret is not confidential (RFC 8252 §8.5):
/// it ships inside the tool; PKCE is what protects the code.
///
/// ```swift
/// let client = try OAuthClient(contentsOf: URL(fileURLWithPath: "client_secret.json"))
/// ```
public struct OAuthClient: Sendable, CustomStringConvertible {
    public static let googleAuthorizationURL = URL(string: "https://accounts.google.com/o/oauth2/v2/auth")!
    public static let googleDeviceAuthorizationURL = URL(string: "https://oauth2.googleapis.com/device/code")!

    public var clientID: String
    public var clientSecret: String?
    /// Where the browser asks for consent (`auth_uri`).
    public var authorizationURL: URL
    /// Where codes and refresh tokens become access tokens (`token_uri`).
    public var tokenURL: URL
    /// Where the device flow starts (RFC 8628 §3.1).
    public var deviceAuthorizationURL: URL

    public init(clientID: String, clientSecret: String?, authorizationURL: URL = googleAuthorizationURL,
                tokenURL: URL = OAuth2RefreshTokenAuthorizer.googleTokenURL,
                deviceAuthorizationURL: URL = googleDeviceAuthorizationURL) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authorizationURL = authorizationURL
        self.tokenURL = tokenURL
        self.deviceAuthorizationURL = deviceAuthorizationURL
    }

    /// Reads a `client_secret.json` (its `installed` or `web` member, or a flat object).
    ///
    /// - Throws: ``AuthError/invalidCredentials`` for a file that is missing, malformed or has no
    ///   `client_id`.
    public init(contentsOf file: URL) throws(AuthError) {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw AuthError(.invalidCredentials, message: "cannot read \(file.path)")
        }
        do { try self.init(json: data) } catch {
            throw AuthError(error.code, message: "\(file.path): \(error.message)")
        }
    }

    /// Reads a `client_secret.json`'s contents (its `installed` or `web` member, or a flat object).
    public init(json data: Data) throws(AuthError) {
        guard let object = (try? JSONValue(parsing: data))?.objectValue else {
            throw AuthError(.invalidCredentials, message: "the client file is not a JSON object")
        }
        let client = object["installed"]?.objectValue ?? object["web"]?.objectValue ?? object
        guard let clientID = client["client_id"]?.stringValue, !clientID.isEmpty else {
            throw AuthError(.invalidCredentials, message: "the client file has no client_id (download it from the console's OAuth client page)")
        }
        func url(_ name: String, _ fallback: URL) throws(AuthError) -> URL {
            guard let text = client[name]?.stringValue else { return fallback }
            guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
                throw AuthError(.invalidCredentials, message: "the client file's \(name) is not a URL")
            }
            return url
        }
        self.init(clientID: clientID, clientSecret: client["client_secret"]?.stringValue,
                  authorizationURL: try url("auth_uri", Self.googleAuthorizationURL),
                  tokenURL: try url("token_uri", OAuth2RefreshTokenAuthorizer.googleTokenURL),
                  deviceAuthorizationURL: try url("device_authorization_uri", Self.googleDeviceAuthorizationURL))
    }

    public var description: String { "OAuthClient(\(clientID))" }

    /// The client's credentials as token requests carry them (in the form, as Google takes them).
    var formFields: [(String, String)] {
        [("client_id", clientID)] + (clientSecret.map { [("client_secret", $0)] } ?? [])
    }
}
