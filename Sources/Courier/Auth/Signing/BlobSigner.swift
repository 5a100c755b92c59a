import Foundation

/// Credentials that sign bytes as a service account: RSASSA-PKCS1-v1_5 with SHA-256, the
/// signature of Cloud Storage's V4 signed URLs and POST policies (`GOOG4-RSA-SHA256`).
///
/// A service account key signs locally (``ServiceAccountKey``, ``ServiceAccountAuthorizer``).
/// Credentials that hold no key sign through IAM Credentials' `signBlob` (``IAMBlobSigner``): the
/// metadata server's account on Cloud Run, GKE or Compute Engine, and impersonated credentials.
/// ``BlobSigners/signer(for:iamEndpoint:)`` picks the way for whatever Application Default
/// Credentials found.
public protocol BlobSigner: Sendable {
    /// The service account whose key signs (its email): a signed URL's `X-Goog-Credential`.
    func signingAccount(through service: ServiceActor?) async throws -> String
    /// The signature of `data` by the account's key.
    func sign(_ data: Data, through service: ServiceActor?) async throws -> Data
}

extension ServiceAccountKey: BlobSigner {
    public func signingAccount(through service: ServiceActor?) async throws -> String { clientEmail }

    public func sign(_ data: Data, through service: ServiceActor?) async throws -> Data {
        try privateKey.signRS256(data)
    }
}

extension ServiceAccountAuthorizer: BlobSigner {
    public func signingAccount(through service: ServiceActor?) async throws -> String { key.clientEmail }

    public func sign(_ data: Data, through service: ServiceActor?) async throws -> Data {
        try key.privateKey.signRS256(data)
    }
}

/// Signs with IAM Credentials' `signBlob`: Google signs with a key of the service account that
/// never leaves Google, for a caller allowed to (`iam.serviceAccounts.signBlob`, in
/// `roles/iam.serviceAccountTokenCreator`). The request takes the service's pipeline, as every
/// credential request does.
public struct IAMBlobSigner: BlobSigner, CustomStringConvertible {
    /// The credentials that authorize the `signBlob` request.
    public let source: any TokenAuthorizer
    /// The account that signs; nil asks the metadata server which account `source` is.
    public let account: String?
    /// The chain of accounts between the source and the signer, each allowed to impersonate the next.
    public let delegates: [String]
    let iam: IAMCredentials

    /// - Parameters:
    ///   - source: The credentials calling `signBlob`.
    ///   - account: The service account that signs (an email); nil when `source` is a
    ///     ``MetadataServerAuthorizer``, whose account the metadata server names.
    ///   - delegates: Accounts between the source and the signer.
    ///   - endpoint: IAM Credentials (`https://iamcredentials.googleapis.com`, or a test server).
    public init(source: any TokenAuthorizer, account: String? = nil, delegates: [String] = [],
                endpoint: URL = ImpersonatedAuthorizer.googleIAMEndpoint) throws {
        guard account != nil || source is MetadataServerAuthorizer else {
            throw AuthError(.unsupportedCredentials, message: "signBlob needs the service account that signs: only the metadata server's credentials name their own")
        }
        self.source = source
        self.account = account
        self.delegates = delegates
        iam = try IAMCredentials(endpoint: endpoint)
    }

    public func signingAccount(through service: ServiceActor?) async throws -> String {
        if let account { return account }
        guard let metadata = source as? MetadataServerAuthorizer else {
            throw AuthError(.unsupportedCredentials, message: "signBlob needs the service account that signs")
        }
        return try await metadata.email(through: service)
    }

    public func sign(_ data: Data, through service: ServiceActor?) async throws -> Data {
        let signer = try await signingAccount(through: service)
        return try await iam.inUniverse(of: source, through: service)
            .signBlob(signer, data, delegates: delegates, authorizedBy: source, through: service)
    }

    public var description: String { "IAMBlobSigner(\(account ?? "the metadata server's account") by \(source))" }
}

/// Finding a ``BlobSigner`` for credentials.
public enum BlobSigners {
    /// The way `authorizer` signs: locally with a service account key, through `signBlob` (at
    /// `iamEndpoint`) as the metadata server's account, or through `signBlob` as the account
    /// impersonated (at the impersonation's own IAM endpoint).
    ///
    /// Throws ``AuthError/unsupportedCredentials`` for credentials that can do neither: a user's
    /// (`authorized_user`), workload identity federation without impersonation, a bearer token.
    public static func signer(for authorizer: any Authorizer,
                              iamEndpoint: URL = ImpersonatedAuthorizer.googleIAMEndpoint) throws -> any BlobSigner {
        switch authorizer {
        case let signer as any BlobSigner:
            return signer
        case let metadata as MetadataServerAuthorizer:
            return try IAMBlobSigner(source: metadata, endpoint: iamEndpoint)
        case let impersonated as ImpersonatedAuthorizer:
            return try IAMBlobSigner(source: impersonated.source, account: impersonated.targetPrincipal,
                                     delegates: impersonated.delegates, endpoint: impersonated.iam.endpoint)
        default:
            throw AuthError(.unsupportedCredentials, message: "\(type(of: authorizer)) can neither sign nor call signBlob: "
                + "sign with a service account key, on the metadata server, or by impersonating a service account")
        }
    }
}
