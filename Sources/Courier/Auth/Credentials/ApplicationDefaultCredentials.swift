import Foundation

/// Google's Application Default Credentials: the credentials a process finds in its
/// environment, looked for in Google's order.
///
/// 1. The file named by `GOOGLE_APPLICATION_CREDENTIALS`.
/// 2. gcloud's `application_default_credentials.json` (under `CLOUDSDK_CONFIG`, else
///    `~/.config/gcloud`), which `gcloud auth application-default login` writes.
/// 3. The metadata server (Compute Engine, GKE, Cloud Run, Cloud Functions), if one answers.
///
/// A file may hold a `service_account` key, `authorized_user` credentials, an
/// `external_account` (workload identity federation) or an `impersonated_service_account`.
/// Its `quota_project_id` (or `GOOGLE_CLOUD_QUOTA_PROJECT`) is sent as `x-goog-user-project`.
///
/// ```swift
/// configuration.auth.authorizer = try ApplicationDefaultCredentials.authorizer(scopes: [Storage.Scope.fullControl])
/// ```
public enum ApplicationDefaultCredentials {
    /// The credentials file that would be used, if any.
    public static func credentialsFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        guard let file = gcloudFile(environment: environment) else { return nil }
        return FileManager.default.fileExists(atPath: file.path) ? file : nil
    }

    /// gcloud's well-known file, whether or not it exists.
    static func gcloudFile(environment: [String: String]) -> URL? {
        let directory = environment["CLOUDSDK_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { "\($0)/.config/gcloud" }
        return directory.map { URL(fileURLWithPath: $0).appendingPathComponent("application_default_credentials.json") }
    }

    /// Writes `credentials` where Application Default Credentials finds them (gcloud's
    /// `application_default_credentials.json`, 0600), as `gcloud auth application-default login`
    /// does: every later run of any program that uses ADC signs in as that person.
    ///
    /// - Returns: The file written.
    @discardableResult
    public static func save(_ credentials: UserCredentials, quotaProjectID: String? = nil,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(AuthError) -> URL {
        guard let file = gcloudFile(environment: environment) else {
            throw AuthError(.invalidCredentials, message: "neither CLOUDSDK_CONFIG nor HOME is set: nowhere to save the credentials")
        }
        try PrivateFile.write(credentials.authorizedUserFile(quotaProjectID: quotaProjectID), to: file.path)
        return file
    }

    /// An authorizer for the environment's credentials.
    ///
    /// Files are read and checked now. With no file, the result is a
    /// ``MetadataServerAuthorizer`` that makes sure a metadata server answers before its first
    /// token, through the service that needs it; if none does, that query fails with
    /// ``AuthError/noCredentials`` naming every place looked at. ``find(scopes:environment:through:)``
    /// makes that check now.
    ///
    /// - Throws: ``AuthError/invalidCredentials`` for a `GOOGLE_APPLICATION_CREDENTIALS` that
    ///   points nowhere, or a malformed file; ``AuthError/unsupportedCredentials`` for a type or
    ///   subject-token source Courier does not implement.
    public static func authorizer(scopes: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                                  quotaProjectID: String? = nil, refresh: TokenRefresh = .default) throws -> any TokenAuthorizer {
        try authorizer(scopes: scopes, gdchAudience: nil, environment: environment, quotaProjectID: quotaProjectID, refresh: refresh)
    }

    /// ``authorizer(scopes:environment:quotaProjectID:refresh:)``, where a `gdch_service_account`
    /// file (Google Distributed Cloud Hosted) makes tokens for `gdchAudience`, the audience its
    /// tokens need (Python's `with_gdch_audience`); other credentials ignore it.
    public static func authorizer(scopes: [String], gdchAudience: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
                                  quotaProjectID: String? = nil, refresh: TokenRefresh = .default) throws -> any TokenAuthorizer {
        let quota = quotaProjectID ?? environment["GOOGLE_CLOUD_QUOTA_PROJECT"].flatMap { $0.isEmpty ? nil : $0 }
        switch try locate(environment: environment) {
        case .file(let file):
            return try file.authorizer(scopes: scopes, quotaProjectID: quota, refresh: refresh, gdchAudience: gdchAudience)
        case .metadataServer(let server, let searched):
            return MetadataServerAuthorizer(server: server, account: "default", scopes: scopes, detect: searched,
                                            refresh: refresh, now: Date.init)
        }
    }

    /// ``authorizer(scopes:environment:quotaProjectID:refresh:)``, with the metadata server's
    /// presence checked now (through `service`, or a short-lived one).
    ///
    /// - Throws: ``AuthError/noCredentials`` naming every place looked at, when nothing is found.
    public static func find(scopes: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                            through service: ServiceActor? = nil) async throws -> any TokenAuthorizer {
        if case .metadataServer(let server, let searched) = try locate(environment: environment) {
            let detection = await server.detect(through: service)
            guard detection.available else { throw AuthError.nothingFound(searched: searched, metadata: detection.detail) }
        }
        return try authorizer(scopes: scopes, environment: environment)
    }

    /// ID tokens for `audience` from the environment's credentials: a service-account key,
    /// impersonation (an `impersonated_service_account` file, or an `external_account` that
    /// impersonates), or the metadata server. User credentials cannot make them.
    public static func idTokenAuthorizer(audience: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                                         refresh: TokenRefresh = .default) throws -> IDTokenAuthorizer {
        switch try locate(environment: environment) {
        case .file(let file):
            return try file.idTokenAuthorizer(audience: audience, refresh: refresh)
        case .metadataServer(let server, _):
            return try IDTokenAuthorizer(audience: audience, source: .metadataServer(server), refresh: refresh)
        }
    }

    /// The project to bill and address by default, as Google's libraries find it:
    /// `GOOGLE_CLOUD_PROJECT` (or the older `GCLOUD_PROJECT`), the credentials file's
    /// `project_id`, then the metadata server's project. Nil when none names one.
    public static func projectID(environment: [String: String] = ProcessInfo.processInfo.environment,
                                 through service: ServiceActor? = nil) async throws -> String? {
        for name in ["GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"] {
            if let project = environment[name], !project.isEmpty { return project }
        }
        switch try locate(environment: environment) {
        case .file(let file):
            return file.projectID
        case .metadataServer(let server, _):
            guard await server.detect(through: service).available else { return nil }
            return try await server.projectID(through: service)
        }
    }

    enum Location {
        case file(CredentialsFile)
        /// No file: the metadata server, and what was looked at before it.
        case metadataServer(MetadataServer, searched: String)
    }

    /// Steps 1 and 2 of the search, reading the file found; else step 3's server.
    static func locate(environment: [String: String]) throws(AuthError) -> Location {
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            guard FileManager.default.fileExists(atPath: path) else {
                throw AuthError(.invalidCredentials, message: "GOOGLE_APPLICATION_CREDENTIALS names \(path), which does not exist")
            }
            return .file(try CredentialsFile(contentsOf: URL(fileURLWithPath: path), environment: environment))
        }
        let gcloud = gcloudFile(environment: environment)
        if let gcloud, FileManager.default.fileExists(atPath: gcloud.path) {
            return .file(try CredentialsFile(contentsOf: gcloud, environment: environment))
        }
        let searched = "no application default credentials: GOOGLE_APPLICATION_CREDENTIALS is not set; "
            + (gcloud.map { "\($0.path) does not exist" } ?? "no gcloud config directory (neither CLOUDSDK_CONFIG nor HOME is set)")
        return .metadataServer(MetadataServer(environment: environment), searched: searched)
    }
}

extension AuthError {
    /// Application Default Credentials found nothing: every place looked at, and what to do.
    static func nothingFound(searched: String, metadata detail: String) -> AuthError {
        AuthError(.noCredentials, message: "\(searched); \(detail). Set GOOGLE_APPLICATION_CREDENTIALS to a credentials file, "
                  + "run `gcloud auth application-default login`, or run on Google Cloud")
    }
}
