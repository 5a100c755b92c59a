import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
@testable import GoogleStorage
import Synchronization
import Testing

/// Signing without a key (IAM Credentials' `signBlob`, against the test server's fake) and the
/// errors that sign nothing. Google's vectors are in SignedURLConformanceTests.
@Suite struct SignedURLTests {
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    /// The signature in a signed URL, as bytes.
    static func signature(of url: URL) throws -> Data {
        let hex = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?
            .first { $0.name == "X-Goog-Signature" }?.value)
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(try #require(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        return Data(bytes)
    }

    @Test func theMetadataServersAccountSignsThroughSignBlob() async throws {
        try await withServerAndService { server, service in
            let metadata = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
            let signer = try BlobSigners.signer(for: metadata, iamEndpoint: server.url("/iam"))
            let options = SignedURLOptions(method: "PUT", expiration: .seconds(900), date: Self.date)
            let url = try await StorageSigning.signedURL(bucket: "b", object: "a file", options: options, signer: signer, through: service)
            // The URL names the metadata server's account, and its signature is the fake's over
            // the string to sign that the same request makes.
            let parts = try V4SignedURL(bucket: "b", object: "a file", options: options, account: server.metadata.email, environment: [:])
            #expect(url.absoluteString.hasPrefix("https://storage.googleapis.com/b/a%20file?"))
            #expect(url.absoluteString.contains("X-Goog-Credential=\(V4SignedURL.escape(server.metadata.email + "/"))"))
            #expect(try server.iam.isSignedBlob(Self.signature(of: url), of: Data(parts.stringToSign.utf8)))
            #expect(server.iam.signBlobCount == 1)
        }
    }

    /// A service in another universe signs URLs for that universe's Cloud Storage, with an
    /// account of that universe (the metadata server says which), unless the options name one.
    @Test func aServiceInAnotherUniverseSignsForItsOwnStorage() async throws {
        try await withTestServer { server in
            server.metadata.setUniverseDomain("sovereign.example")
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.universeDomain = "sovereign.example"
            try await withCheckedService(configuration: configuration) { service in
                let metadata = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
                let signer = try BlobSigners.signer(for: metadata, iamEndpoint: server.url("/iam"))
                let url = try await StorageSigning.signedURL(bucket: "b", object: "o", options: SignedURLOptions(date: Self.date),
                                                             signer: signer, through: service)
                #expect(url.absoluteString.hasPrefix("https://storage.sovereign.example/b/o?"))
                let named = try await StorageSigning.signedURL(bucket: "b", object: "o",
                                                               options: SignedURLOptions(universeDomain: "other.example", date: Self.date),
                                                               signer: signer, through: service)
                #expect(named.host == "storage.other.example")
                let policy = try await StorageSigning.postPolicy(bucket: "b", object: "o", options: PostPolicyOptions(date: Self.date),
                                                                 signer: signer, through: service)
                #expect(policy.url.absoluteString.hasPrefix("https://storage.sovereign.example/b/"))
            }
        }
    }

    @Test func impersonatedCredentialsSignAsTheirTarget() async throws {
        try await withServerAndService { server, service in
            let source = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
            let target = "signer@test-project.iam.gserviceaccount.com"
            let impersonated = try ImpersonatedAuthorizer(source: source, targetPrincipal: target, scopes: ["s"],
                                                          delegates: ["projects/-/serviceAccounts/middle@test-project.iam.gserviceaccount.com"],
                                                          iamEndpoint: server.url("/iam"))
            let signer = try BlobSigners.signer(for: impersonated)
            #expect(try await signer.signingAccount(through: service) == target)
            let data = Data("to sign".utf8)
            #expect(try server.iam.isSignedBlob(await signer.sign(data, through: service), of: data))
            #expect(server.iam.lastDelegates == ["projects/-/serviceAccounts/middle@test-project.iam.gserviceaccount.com"])

            server.iam.deny(target)
            await #expect(throws: AuthError.permissionDenied) { try await signer.sign(data, through: service) }
        }
    }

    @Test func credentialsThatCannotSignSayWhy() throws {
        let user = try OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: "s3kr1t-client", refreshToken: "s3kr1t-refresh")
        #expect(throws: AuthError.unsupportedCredentials) { try BlobSigners.signer(for: user) }
        #expect(throws: AuthError.unsupportedCredentials) { try BlobSigners.signer(for: BearerTokenAuthorizer(token: "s3kr1t-token")) }
        do {
            _ = try BlobSigners.signer(for: user)
        } catch {
            #expect(!"\(error)".contains("s3kr1t"))
            #expect("\(error)".contains("signBlob"))
        }
    }

    /// A signer that counts what it is asked to sign.
    final class CountingSigner: BlobSigner {
        let count = Atomic<Int>(0)
        func signingAccount(through service: ServiceActor?) async throws -> String { "a@b.iam.gserviceaccount.com" }
        func sign(_ data: Data, through service: ServiceActor?) async throws -> Data {
            count.add(1, ordering: .relaxed)
            return Data([1, 2])
        }
    }

    @Test func badOptionsSignNothing() async throws {
        let signer = CountingSigner()
        let cases: [(SignedURLOptions, SignedURLError)] = [
            (SignedURLOptions(expiration: .seconds(604_801)), .expirationTooLong),
            (SignedURLOptions(expiration: .zero), .expirationTooLong),
            (SignedURLOptions(method: "PATCH"), .invalidMethod),
            (SignedURLOptions(scheme: "ftp"), .invalidOption),
            (SignedURLOptions(headers: ["bad\nname": "v"]), .invalidOption),
            // Only what a header line can carry is signed: a name of visible ASCII, no control
            // character but a tab in a value (a lone CR, NUL, VT, a space or a snowman in a name were signed before).
            (SignedURLOptions(headers: ["x-goog-meta-a": "one\rtwo"]), .invalidOption),
            (SignedURLOptions(headers: ["x-goog-meta-a": "one\u{0}"]), .invalidOption),
            (SignedURLOptions(headers: ["x-goog-meta-a": "one\u{0B}two"]), .invalidOption),
            (SignedURLOptions(headers: ["x-goog-meta-a": "line\r\nx-goog-meta-b: two"]), .invalidOption),
            (SignedURLOptions(headers: ["x goog": "v"]), .invalidOption),
            (SignedURLOptions(headers: ["x-goog-meta-\u{2603}": "v"]), .invalidOption),
            (SignedURLOptions(headers: ["\u{212A}": "v"]), .invalidOption), // the Kelvin sign, whose lower case is "k"
            (SignedURLOptions(headers: ["Host": "elsewhere.example"]), .invalidOption),
            // Under a second signs X-Goog-Expires=0: expired at once.
            (SignedURLOptions(expiration: .milliseconds(999)), .expirationTooLong),
            (SignedURLOptions(style: .bucketBoundHostname("")), .invalidOption),
            (SignedURLOptions(endpoint: "user@evil.example"), .invalidOption),
        ]
        for (options, expected) in cases {
            await #expect(throws: expected) {
                try await StorageSigning.signedURL(bucket: "b", object: "o", options: options, signer: signer)
            }
        }
        await #expect(throws: SignedURLError.expirationTooLong) {
            try await StorageSigning.postPolicy(bucket: "b", object: "o", options: PostPolicyOptions(expiration: .seconds(8 * 86400)),
                                                signer: signer)
        }
        await #expect(throws: SignedURLError.expirationTooLong) {
            try await StorageSigning.postPolicy(bucket: "b", object: "o", options: PostPolicyOptions(expiration: .milliseconds(500)),
                                                signer: signer)
        }
        #expect(signer.count.load(ordering: .relaxed) == 0)
        // At the limit, it signs.
        _ = try await StorageSigning.signedURL(bucket: "b", object: "o", options: SignedURLOptions(expiration: .seconds(604_800)),
                                               signer: signer)
        #expect(signer.count.load(ordering: .relaxed) == 1)
    }

    @Test func aResumableUploadStartIsAPostWithTheResumableHeader() throws {
        let parts = try V4SignedURL(bucket: "b", object: "o", options: .resumableUpload(), account: "a@b", environment: [:])
        #expect(parts.canonicalRequest.hasPrefix("POST\n/b/o\n"))
        #expect(parts.canonicalQuery.contains("X-Goog-SignedHeaders=host%3Bx-goog-resumable"))
    }

    @Test func aPolicysHTMLFormEscapesEveryValueAndPutsTheFileLast() throws {
        let policy = SignedPostPolicy(url: try #require(URL(string: "https://storage.googleapis.com/b/")),
                                      fields: ["key": #"a"><script>x</script>&'.jpg"#, "policy": "e30="])
        let form = policy.htmlForm(id: "f", submitLabel: "Send <it>")
        #expect(form == """
            <form id="f" action="https://storage.googleapis.com/b/" method="post" enctype="multipart/form-data">
              <input type="hidden" name="key" value="a&quot;&gt;&lt;script&gt;x&lt;/script&gt;&amp;&#39;.jpg">
              <input type="hidden" name="policy" value="e30=">
              <input type="file" name="file">
              <button type="submit">Send &lt;it&gt;</button>
            </form>

            """)
        #expect(!policy.htmlForm(submitLabel: nil).contains("<button"))
    }
}
