import Foundation

/// A service account impersonated by other credentials, through IAM Credentials'
/// `generateAccessToken`: the source credentials (a user's, another service account's, the
/// metadata server's) must hold `roles/iam.serviceAccountTokenCreator` on the target, or on
/// the first of `delegates`, each of which may impersonate the next.
///
/// ```swift
/// let source = try ApplicationDefaultCredentials.authorizer(scopes: [])
/// configuration.auth.authorizer = try ImpersonatedAuthorizer(
///     source: source, targetPrincipal: "deployer@my-project.iam.gserviceaccount.com",
///     scopes: ["https://www.googleapis.com/auth/cloud-platform"])
/// ```
///
/// `gcloud auth application-default login --impersonate-service-account …` writes the same as an
/// `impersonated_service_account` file, which ``ApplicationDefaultCredentials`` reads.
public final class ImpersonatedAuthorizer: TokenAuthorizer, CustomStringConvertible {
    /// `https://iamcredentials.googleapis.com`.
    public static let googleIAMEndpoint = URL(string: "https://iamcredentials.googleapis.com")!

    public let source: any TokenAuthorizer
    public let targetPrincipal: String
    public let scopes: [String]
    public let delegates: [String]
    public let lifetime: Duration
    public let quotaProjectID: String?
    let iam: IAMCredentials
    let cache: TokenCache

    /// - Parameters:
    ///   - source: The credentials that impersonate.
    ///   - targetPrincipal: The service account's email.
    ///   - scopes: The scopes of the impersonated token (`cloud-platform` when empty).
    ///   - delegates: The chain between source and target (`projects/-/serviceAccounts/<email>` or emails).
    ///   - lifetime: How long each token lives; at most 1 hour unless the organization allows 12.
    ///   - iamEndpoint: IAM Credentials (a test server).
    ///   - quotaProjectID: Bills requests' quota to this project (`x-goog-user-project`).
    ///   - refresh: When tokens are refreshed.
    ///   - now: The clock for token expiry.
    public init(source: any TokenAuthorizer, targetPrincipal: String, scopes: [String], delegates: [String] = [],
                lifetime: Duration = .seconds(3600), iamEndpoint: URL = googleIAMEndpoint, quotaProjectID: String? = nil,
                refresh: TokenRefresh = .default, now: @escaping @Sendable () -> Date = Date.init) throws {
        let iam = try IAMCredentials(endpoint: iamEndpoint)
        let scopes = scopes.isEmpty ? [GoogleScopes.cloudPlatform] : scopes
        self.source = source
        self.targetPrincipal = targetPrincipal
        self.scopes = scopes
        self.delegates = delegates
        self.lifetime = lifetime
        self.quotaProjectID = quotaProjectID ?? source.quotaProjectID
        self.iam = iam
        cache = TokenCache(source: "impersonated_service_account", refresh: refresh, now: now) { service in
            try await iam.inUniverse(of: source, through: service)
                .generateAccessToken(targetPrincipal, scopes: scopes, delegates: delegates, lifetime: lifetime,
                                     authorizedBy: source, through: service)
        }
    }

    /// The source's universe: an impersonated account lives where its impersonator does.
    public func universeDomain(context: AuthorizationContext?) async throws -> String {
        try await source.universeDomain(context: context)
    }

    public var description: String { "ImpersonatedAuthorizer(\(targetPrincipal) by \(source))" }
}

extension ImpersonatedAuthorizer: CachedTokenAuthorizer {}
