import Foundation

/// Google's Application Default Credentials: the credentials a process finds in its
/// environment, as Google's own client libraries look for them.
///
/// 1. The file named by `GOOGLE_APPLICATION_CREDENTIALS`.
/// 2. gcloud's `~/.config/gcloud/application_default_credentials.json` (or under `CLOUDSDK_CONFIG`).
///
/// Either file may hold an `authorized_user` (a refresh token, from `gcloud auth
/// application-default login`) or a `service_account` key.
///
/// ```swift
/// configuration.authorizer = try ApplicationDefaultCredentials.authorizer(scopes: [Storage.Scope.fullControl])
/// ```
public enum ApplicationDefaultCredentials {
    /// The credentials file that would be used, if any.
    public static func credentialsFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let configDirectory = environment["CLOUDSDK_CONFIG"]
            ?? environment["HOME"].map { "\($0)/.config/gcloud" }
        guard let configDirectory else { return nil }
        let file = URL(fileURLWithPath: configDirectory).appendingPathComponent("application_default_credentials.json")
        return FileManager.default.fileExists(atPath: file.path) ? file : nil
    }

    /// An authorizer for the environment's credentials.
    ///
    /// - Throws: ``AuthError/invalidCredentials`` when there are none, or the file is of
    ///   another type or malformed. A `GOOGLE_APPLICATION_CREDENTIALS` that points nowhere is an error.
    public static func authorizer(scopes: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                                  tokenURL: URL? = nil) throws -> any Authorizer {
        guard let file = credentialsFile(environment: environment) else {
            throw AuthError(.invalidCredentials, message: "no application default credentials: set GOOGLE_APPLICATION_CREDENTIALS or run `gcloud auth application-default login`")
        }
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw AuthError(.invalidCredentials, message: "cannot read \(file.path)")
        }
        guard let object = (try? JSONValue(parsing: data))?.objectValue else {
            throw AuthError(.invalidCredentials, message: "\(file.path) is not a JSON object")
        }
        switch object["type"]?.stringValue {
        case "service_account":
            return try ServiceAccountAuthorizer(key: ServiceAccountKey(json: data), scopes: scopes, tokenURL: tokenURL)
        case "authorized_user":
            guard let clientID = object["client_id"]?.stringValue, let refreshToken = object["refresh_token"]?.stringValue else {
                throw AuthError(.invalidCredentials, message: "\(file.path) lacks client_id or refresh_token")
            }
            return try OAuth2RefreshTokenAuthorizer(
                clientID: clientID, clientSecret: object["client_secret"]?.stringValue, refreshToken: refreshToken,
                scopes: scopes, tokenURL: tokenURL ?? OAuth2RefreshTokenAuthorizer.googleTokenURL)
        case let other:
            throw AuthError(.invalidCredentials, message: "\(file.path) has unsupported type \(other ?? "none")")
        }
    }
}
