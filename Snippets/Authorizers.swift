// Each authorizer against the embedded test server's OAuth 2 token endpoint and protected API.
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
    configuration.authorizer = authorizer
    try await withService(configuration: configuration) { service in
        let note = try await service.execute(get)
        print(label, "→", note.json["title"]?.stringValue ?? "?")
    }
}

let tokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-token-\(UUID()).json")
defer { try? FileManager.default.removeItem(at: tokenFile) }

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

// 4. Application default credentials: GOOGLE_APPLICATION_CREDENTIALS, or gcloud's file.
let adc = try ApplicationDefaultCredentials.authorizer(scopes: ["notes.read"],
                                                       environment: ["GOOGLE_APPLICATION_CREDENTIALS": keyFile.path])
try await call(with: adc, "application default credentials")

try? FileManager.default.removeItem(at: keyFile)
await server.stop()
