import Foundation

/// The service account of the machine the process runs on, from the metadata server: what
/// Compute Engine, GKE (with or without workload identity), Cloud Run and Cloud Functions give a
/// workload instead of a key file.
///
/// ```swift
/// configuration.auth.authorizer = MetadataServerAuthorizer(scopes: ["https://www.googleapis.com/auth/cloud-platform"])
/// ```
///
/// Scopes are passed to the server (`?scopes=`); Cloud Run, Cloud Functions and GKE's
/// workload identity honour them, while a Compute Engine VM's tokens keep the scopes the VM was
/// created with. Tokens are cached and refreshed single-flight in the background before they
/// expire (``TokenRefresh``); requests go through the service that needs the token.
public final class MetadataServerAuthorizer: TokenAuthorizer, CustomStringConvertible {
    public let server: MetadataServer
    /// The service account (`default`: the one the instance runs as).
    public let account: String
    public let scopes: [String]
    /// The universe given at creation; nil: the metadata server's (``MetadataServer/universeDomain(through:)``).
    public let configuredUniverseDomain: String?
    /// What Application Default Credentials searched, when this authorizer is their last resort.
    private let searched: String?
    let cache: TokenCache

    /// - Parameters:
    ///   - account: The service account, by email or `default`.
    ///   - scopes: Scopes to ask for, where the platform honours them.
    ///   - environment: Where `GCE_METADATA_HOST` is read.
    ///   - universeDomain: The instance's universe; nil asks the metadata server, once.
    ///   - refresh: When tokens are refreshed.
    ///   - now: The clock for token expiry (a movable one in tests).
    public convenience init(account: String = "default", scopes: [String] = [],
                            environment: [String: String] = ProcessInfo.processInfo.environment, universeDomain: String? = nil,
                            refresh: TokenRefresh = .default, now: @escaping @Sendable () -> Date = Date.init) {
        self.init(server: MetadataServer(environment: environment), account: account, scopes: scopes, detect: nil,
                  universeDomain: universeDomain, refresh: refresh, now: now)
    }

    /// - Parameter detect: When set (Application Default Credentials), the first token request
    ///   first checks that a metadata server answers, and throws ``AuthError/noCredentials``
    ///   with this text and the check's outcome if none does.
    init(server: MetadataServer, account: String, scopes: [String], detect searched: String?, universeDomain: String? = nil,
         refresh: TokenRefresh, now: @escaping @Sendable () -> Date) {
        self.server = server
        configuredUniverseDomain = universeDomain
        self.searched = searched
        self.account = account
        self.scopes = scopes
        cache = TokenCache(source: "metadata", refresh: refresh, now: now) { service in
            if let searched {
                let detection = await server.detect(through: service)
                guard detection.available else {
                    throw AuthError.nothingFound(searched: searched, metadata: detection.detail)
                }
            }
            var query: [(String, String)] = []
            if !scopes.isEmpty { query.append(("scopes", scopes.joined(separator: ","))) }
            let body = try await server.get("instance/service-accounts/\(account)/token", query: query,
                                            name: "metadata.token", through: service)
            guard let object = (try? JSONValue(parsing: body))?.objectValue else {
                throw AuthError(.metadataServer, message: "the metadata server's token answer is not JSON")
            }
            return try TokenEndpoint.accessToken(in: object, scopes: scopes, now: now())
        }
    }

    /// The universe given at creation, else the metadata server's.
    public func universeDomain(context: AuthorizationContext?) async throws -> String {
        if let universe = configuredUniverseDomain { return universe }
        if let searched {
            // As for a token: no metadata server is "no credentials found", not a failed request.
            // Both answers are kept by `server` (this authorizer's value), so each is asked once.
            let detection = await server.detect(through: context?.service)
            guard detection.available else { throw AuthError.nothingFound(searched: searched, metadata: detection.detail) }
        }
        return try await server.universeDomain(through: context?.service)
    }

    /// The project the instance runs in.
    public func projectID(through service: ServiceActor? = nil) async throws -> String {
        try await server.projectID(through: service)
    }

    /// The email of the service account tokens are for.
    public func email(through service: ServiceActor? = nil) async throws -> String {
        try await server.serviceAccountEmail(account, through: service)
    }

    public var description: String { "MetadataServerAuthorizer(\(account) at \(server.root.absoluteString))" }
}

extension MetadataServerAuthorizer: CachedTokenAuthorizer {}
