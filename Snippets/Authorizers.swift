// Each authorizer against the embedded test server's OAuth 2 token endpoint and protected API,
// and a person's sign-in.
import Courier
import CourierTestServer
import CourierTesting
import Foundation

let server = try await TestServer.start()
server.notes.seed(count: 1)
let tokenURL = server.url("/token")
let api = APIDescription(name: "notes", version: "v1", rootURL: server.baseURL, servicePath: "protected/notes/v1/")
let get = Query<GenericObject>(api: api, name: "notes.notes.get", path: "notes/{id}", pathParameters: ["id": "note-0001"])

func call(with authorizer: any Authorizer, _ label: String) async throws {
    var configuration = ServiceActor.Configuration()
    configuration.auth.authorizer = authorizer
    try await withService(configuration: configuration) { service in
        let note = try await service.execute(get)
        print(label, "→", note.json["title"]?.stringValue ?? "?")
    }
}

let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-token-\(UUID()).json")
defer { try? FileManager.default.removeItem(at: tokenFile) }

// The embedded server also fakes Google's metadata server, STS and IAM Credentials: this
// environment makes Courier find them where it would find the real ones on Google Cloud.
let cloud = ["GCE_METADATA_HOST": server.metadataHost, "HOME": FileManager.default.temporaryDirectory.path + "/courier-demo-home"]

// 1. A fixed bearer token (here: one fetched for the demo), and an API key combined with it.
server.tokens.registerClient(id: "demo-client", secret: "demo-secret", refreshToken: "demo-refresh-token")
let refresh = try OAuth2RefreshTokenAuthorizer(
    clientID: "demo-client", clientSecret: "demo-secret", refreshToken: "demo-refresh-token",
    scopes: ["notes.read"], tokenURL: tokenURL,
    store: FileTokenStore(path: tokenFile.path))
let token = try await refresh.currentToken()
try await call(with: BearerTokenAuthorizer(token: token.value), "bearer token")
try await call(with: CombinedAuthorizer(APIKeyAuthorizer(key: "demo-api-key-s3kr1t"), BearerTokenAuthorizer(token: token.value)),
               "API key + bearer")

// 2. A refresh token: cached, refreshed before expiry, single-flight, persisted (0600).
try await call(with: refresh, "refresh token")

// 3. A service account key file: an RS256 JWT signed with OpenSSL, exchanged for a token.
//    (A throwaway account for the demo; real key files come from the Cloud console.)
let account = try TestServiceAccount(email: "demo@project.iam.example.com", tokenURL: tokenURL)
try server.tokens.registerServiceAccount(email: account.email, publicKeyPEM: account.publicKeyPEM)
let keyFile = try account.writeKeyFile(to: FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-sa-\(UUID()).json"))
try await call(with: try ServiceAccountAuthorizer(keyFile: keyFile, scopes: ["notes.read"]), "service account")
//    With Google's token endpoint the JWT is signed as the token itself: no round trip at all.
try await call(with: try ServiceAccountAuthorizer(keyFile: keyFile, scopes: ["notes.read"], selfSignedJWT: .always),
               "service account, self-signed JWT")

// 4. Application default credentials: GOOGLE_APPLICATION_CREDENTIALS, or gcloud's file.
let adc = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                       environment: ["GOOGLE_APPLICATION_CREDENTIALS": keyFile.path])
try await call(with: adc, "application default credentials")

// 5. On Compute Engine, GKE, Cloud Run or Cloud Functions: no file, the metadata server.
let onCloud = try await ApplicationDefaultCredentials.find(scopes: ["notes.read"], environment: cloud)
try await call(with: onCloud, "metadata server (found by ADC)")
print("project:", try await ApplicationDefaultCredentials.projectID(environment: cloud) ?? "none")

// 6. Impersonating a service account (IAM Credentials' generateAccessToken).
try await call(with: try ImpersonatedAuthorizer(source: onCloud, targetPrincipal: "deployer@project.iam.example.com",
                                                scopes: ["notes.read"], iamEndpoint: server.url("/iam")),
               "impersonated service account")

// 7. Workload identity federation: an external token from a file, exchanged at STS.
let subjectFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-subject-\(UUID())")
try Data(server.sts.issueSubjectToken().utf8).write(to: subjectFile)
let federation = try ExternalAccountAuthorizer.Configuration(json: JSONSerialization.data(withJSONObject: [
    "type": "external_account", "audience": server.sts.audience, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
    "token_url": server.url("/sts/v1/token").absoluteString, "credential_source": ["file": subjectFile.path],
]))
try await call(with: try ExternalAccountAuthorizer(configuration: federation, scopes: ["notes.read"]), "workload identity federation")
try? FileManager.default.removeItem(at: subjectFile)

// 8. ID tokens, to call a Cloud Run service that requires authentication.
let idTokens = try ApplicationDefaultCredentials.idTokenAuthorizer(audience: "https://hello-abc123-uc.a.run.app", environment: cloud)
let idToken = try await idTokens.currentToken()
print("ID token expires", idToken.expiresAt.map { "\($0)" } ?? "never")

// 9. Federation from AWS: the role's keys from the EC2 metadata service (IMDSv2), a SigV4-signed
//    GetCallerIdentity request as the subject token.
let awsFederation = try ExternalAccountAuthorizer.Configuration(json: JSONSerialization.data(withJSONObject: [
    "type": "external_account", "audience": server.sts.audience, "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
    "token_url": server.url("/sts/v1/token").absoluteString,
    "credential_source": ["environment_id": "aws1", "region_url": server.url("/aws/latest/meta-data/placement/availability-zone").absoluteString,
                          "url": server.url("/aws/latest/meta-data/iam/security-credentials").absoluteString,
                          "imdsv2_session_token_url": server.url("/aws/latest/api/token").absoluteString],
]), environment: [:])
try await call(with: try ExternalAccountAuthorizer(configuration: awsFederation, scopes: ["notes.read"]), "workload identity federation from AWS")

// 10. A person signs in from a tool with no browser: the device flow (the fake approves at once;
//     `signIn.withBrowser()` is the same with a loopback redirect, `courier auth login` both).
server.tokens.signIn.deviceInterval = 1 // the fake asks for polls a second apart (Google: 5 s)
let signIn = UserSignIn(client: OAuthClient(clientID: "demo-client", clientSecret: "demo-secret", tokenURL: tokenURL,
                                            deviceAuthorizationURL: server.url("/device/code")),
                        scopes: ["notes.read"])
let user = try await signIn.withDeviceCode { prompt in print("sign-in:", prompt) }
try await call(with: try user.authorizer(), "signed-in user")

try? FileManager.default.removeItem(at: keyFile)
await server.stop()
