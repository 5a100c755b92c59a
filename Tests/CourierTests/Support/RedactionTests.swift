@testable import Courier
import CourierSync
import CourierTestSupport
import Foundation
import InMemoryTracing
import Logging
import Testing
import Tracing

/// Free text in logged bodies: a server that echoes the request must not put its credentials in the log.
@Suite struct TextRedactionTests {
    @Test(arguments: [
        ("Bearer ya29.s3kr1t-x", "Bearer _snip_"),
        ("authorization: bearer abc-s3kr1t, next", "authorization: bearer _snip_"),
        ("GET / HTTP/1.1\r\nCookie: sid=s3kr1t\r\nAccept: */*", "GET / HTTP/1.1\r\nCookie: _snip_\r\nAccept: */*"),
        ("sent {\"refresh_token\": \"1//s3kr1t\\\"x\", \"code\": 404}", "sent {\"refresh_token\": \"_snip_\", \"code\": 404}"),
        ("note: key is not a header here", "note: key is not a header here"),
        ("key=API-KEY-s3kr1t&alt=json", "key=_snip_&alt=json"),
        ("/path?a=1&upload_id=s3kr1t#frag", "/path?a=1&upload_id=_snip_#frag"),
        ("monkey=banana&token=s3kr1t", "monkey=banana&token=_snip_"),
        ("no secrets = here", "no secrets = here"),
        ("plain", "plain"),
    ])
    func secretsInTextAreSnipped(input: String, expected: String) {
        #expect(Redaction.text(input) == expected)
    }
}

/// The one list of secret names (`Redaction.secretNames`), fed through every place Courier
/// prints what it sent or received: none of the values may come out.
@Suite struct SecretNameTests {
    /// The spellings one name takes in the wild: as listed, camelCase, and an upper-case header.
    static func spellings(_ name: String) -> [String] {
        let words = name.split(whereSeparator: { $0 == "_" || $0 == "-" }).map(String.init)
        let camel = words.enumerated().map { $0.offset == 0 ? $0.element : $0.element.capitalized }.joined()
        return Array(Set([name, camel, words.map { $0.uppercased() }.joined(separator: "-")])).sorted()
    }

    @Test func theScannerComparesWithoutCaseUnderscoresOrHyphens() {
        #expect(Redaction.isSecret("accessToken") && Redaction.isSecret("ACCESS-TOKEN") && Redaction.isSecret("Set-Cookie"))
        #expect(!Redaction.isSecret("alt") && !Redaction.isSecret("monkey") && !Redaction.isSecret("uploadType"))
        #expect(Redaction.form("alt=json&clientSecret=s3kr1t&x=1") == "alt=json&clientSecret=_snip_&x=1")
    }

    /// Each name, in each spelling, as a URL parameter, a header, a JSON member, a form field and a
    /// `name=value` in free text, through a real exchange with the echo route (which sends the
    /// query, the headers and the body back) and a failed one: the HTTP log, the log lines, the
    /// spans, the error and the descriptions hold none of the values, and the log shows it hid some.
    /// Each ending of ``Redaction/secretEndings`` makes a longer name secret; a name that only
    /// refers to a secret is kept.
    @Test func anEndingMakesANameSecret() {
        for name in ["clientSecret", "sharedSecret", "ROOT_PASSWORD", "keyStorePassword", "certPrivateKey", "passphrase",
                     "encrypted-pem-private-key", "oauth_token", "idToken", "sasToken", "X-Auth-Token", "X-Vault-Token",
                     "PRIVATE-TOKEN", "huggingFaceAccessToken", "bearer_token", "mapsApiKey", "X-OpenAI-Api-Key", "sessionCookie"] {
            #expect(Redaction.isSecret(name), "\(name)")
        }
        for name in ["passwordSecretVersion", "secretName", "secretType", "privateKeyPath", "passwordChangeInterval", "data",
                     "tokenType", "token_type"] {
            #expect(!Redaction.isSecret(name), "\(name)")
        }
    }

    /// The cursors of ``Redaction/publicEndings`` stay in the log beside a credential that ends
    /// the same way; a listed name ending as a cursor does stays secret.
    @Test func aCursorEndingInTokenIsKept() {
        for name in ["pageToken", "nextPageToken", "prevPageToken", "_page_token", "startPageToken", "newStartPageToken",
                     "syncToken", "nextSyncToken", "continuationToken", "resumeToken", "rewriteToken", "partitionToken",
                     "consistencyToken", "nextSequenceToken", "versionToken", "x-goog-gcs-idempotency-token"] {
            #expect(!Redaction.isSecret(name), "\(name)")
        }
        #expect(Redaction.url("https://h/b/o?pageToken=CgRwYWdl&oauth_token=ya29.s3kr1t-cursor")
            == "https://h/b/o?pageToken=CgRwYWdl&oauth_token=_snip_")
        #expect(Redaction.text(#"{"nextPageToken": "CgRwYWdl", "idToken": "eyJs3kr1t"}"#)
            == #"{"nextPageToken": "CgRwYWdl", "idToken": "_snip_"}"#)
    }

    /// Secret Manager's `payload.data` is hidden; `data` anywhere else (a Pub/Sub message's) is not.
    @Test func aMemberIsSecretInsideItsParent() {
        let answer: JSONValue = [
            "name": "projects/p/secrets/s/versions/1",
            "payload": ["data": "czNrcjF0", "dataCrc32c": "123"],
            "messages": [["data": "aGVsbG8=", "payload": ["data": "czNrcjF0LTI="]]],
        ]
        let redacted = Redaction.json(answer)
        #expect(redacted.serialized() != answer.serialized())
        let text = String(decoding: redacted.serialized(), as: UTF8.self)
        #expect(!text.contains("czNrcjF0") && text.contains("aGVsbG8=") && text.contains("\"dataCrc32c\":\"123\""), "\(text)")
        #expect(text.contains("projects/p/secrets/s/versions/1"), "\(text)")
    }

    /// An object shaped like a header pair hides its value and still has its other members
    /// walked: it returned at the pair before, printing a key file's members beside it (FuzzJSON's
    /// find, `Fuzz/corpus/json/pair-with-key-members.json`).
    @Test func aPairShapedObjectsOtherMembersAreWalked() {
        let answer: JSONValue = [
            "headers": [[
                "name": "Authorization", "value": "Bearer ya29.s3kr1t-pair-token",
                "private_key": "s3kr1t-pair-key", "private_key_id": "s3kr1t-pair-key-id",
                "nested": ["client_secret": "s3kr1t-pair-client"], "note": "kept", "code": 7,
            ]],
        ]
        let text = String(decoding: Redaction.json(answer).serialized(), as: UTF8.self)
        #expect(!text.contains("s3kr1t"), "\(text)")
        #expect(text.contains("\"name\":\"Authorization\"") && text.contains("\"note\":\"kept\"") && text.contains("\"code\":7"), "\(text)")
        // A pair whose name is not secret keeps its value.
        let plain = String(decoding: Redaction.json(["name": "Accept", "value": "application/json"]).serialized(), as: UTF8.self)
        #expect(plain.contains("application/json"), "\(plain)")
    }

    /// The names and a name with each ending: the endings go through every path as the names do.
    static let namesAndEndings = Redaction.secretNames + Redaction.secretEndings.map { "my_" + $0 }

    @Test(arguments: namesAndEndings)
    func everyNameIsHiddenOnEveryPath(name: String) async throws {
        try await Self.expectHiddenOnEveryPath(name)
    }

    /// A name of the caller's own, added at run time, is hidden on every path the listed names
    /// are; before it is added, the scanner does not know it.
    @Test func anAddedNameIsHiddenOnEveryPath() async throws {
        let name = "tenant_license_code"
        #expect(Self.spellings(name).allSatisfy { !Redaction.isSecret($0) }, "a name the lists already hide proves nothing")
        Redaction.addSecretNames([name])
        #expect(Self.spellings(name).allSatisfy { Redaction.isSecret($0) })
        #expect(!Redaction.isSecret("tenant_license"), "a name is added whole, not as an ending")
        try await Self.expectHiddenOnEveryPath(name)
    }

    static func expectHiddenOnEveryPath(_ name: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-secret-names-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = CapturedLog()
        let tracer = InMemoryTracer()
        var values: [String] = []
        var printed: [String] = [] // descriptions and errors
        try await withServerAndService(configure: { configuration in
            configuration.telemetry.httpLog = HTTPLogOptions(directory: directory)
            var logger = Logger(label: "secret-names", factory: capture.handler)
            logger.logLevel = .trace
            configuration.telemetry.logger = logger
            configuration.telemetry.tracer = tracer
            configuration.retry.maxRetries = 0
        }) { server, service async throws in
            for (index, spelling) in Self.spellings(name).enumerated() {
                let value = { (place: String) in "\(place)-\(index)-\(SuiteLog.marker)-\(UUID().uuidString.prefix(8))" }
                let (query, header, member, field, text) = (value("query"), value("header"), value("json"), value("form"), value("text"))
                values += [query, header, member, field, text]

                var json = HTTPRequest(method: .post, url: server.url("/echo?alt=json&\(spelling)=\(query)"))
                json.headers[spelling] = header
                json.headers["Content-Type"] = "application/json"
                json.body = .data(Data(#"{"\#(spelling)": "\#(member)", "nested": [{"\#(spelling)": "\#(member)"}]}"#.utf8))
                printed += [json.description, json.headers.description]
                #expect(try await service.send(json).status == 200)

                var form = HTTPRequest(method: .post, url: server.url("/echo"))
                form.headers["Content-Type"] = "application/x-www-form-urlencoded"
                form.body = .data(Data("alt=json&\(spelling)=\(field)".utf8))
                #expect(try await service.send(form).status == 200)

                var plain = HTTPRequest(method: .post, url: server.url("/echo"))
                plain.headers["Content-Type"] = "text/plain"
                plain.body = .data(Data("sent with \(spelling)=\(text) in a sentence".utf8))
                #expect(try await service.send(plain).status == 200)

                let refused = value("refused")
                values.append(refused)
                let unreachable = HTTPRequest(url: URL(string: "http://127.0.0.1:\(unusedPort())/x?\(spelling)=\(refused)")!)
                do {
                    _ = try await service.send(unreachable)
                    Issue.record("a closed port answered")
                } catch {
                    printed += ["\(error)", String(reflecting: error)]
                }
            }
            await service.shutdown()
        }

        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "txt" }
        let logged = try files.map { try String(contentsOf: $0, encoding: .utf8) }
        let lines = capture.lines.withLock { $0 }
        let spans = tracer.finishedSpans.map { span in
            "\(span.operationName) \(span.attributes) \(span.status.map { "\($0)" } ?? "") \(span.errors.map { "\($0.error)" })"
        }
        #expect(files.count == Self.spellings(name).count * 4, "an exchange went unlogged")
        #expect(lines.contains { $0.contains("transfer failed") } && spans.count >= 4, "a path saw nothing to hide")
        for (place, texts) in [("HTTP log", logged), ("log line", lines), ("span", spans), ("description", printed)] {
            for text in texts {
                for value in values where text.contains(value) {
                    Issue.record("\(name): \(value) in a \(place):\n\(text)")
                }
            }
        }
        // Evidence that the values went through and were hidden, not lost on the way.
        #expect(logged.allSatisfy { $0.contains(Redaction.placeholder) }, "\(name): an exchange was logged with nothing snipped")
    }
}

/// Public values a user prints while debugging (`print(response)`, a log line with a session)
/// show no credential: responses, downloads and upload sessions printed the URL that answered,
/// an upload session's URI whole (which alone lets anyone upload into it), and an API key in the
/// query, since they had no description of their own and Swift printed every field.
@Suite struct PrintedValueTests {
    @Test func responsesDownloadsAndSessionsPrintNoCredential() async throws {
        try await withServerAndService { server, service in
            let url = server.url("/bytes/100?key=s3kr1t-key&upload_id=s3kr1t-session")
            let response = try await service.send(HTTPRequest(url: url))
            let streamed = try await service.stream(HTTPRequest(url: url))
            for try await _ in streamed.body {}
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-printed-\(UUID())")
            defer { try? FileManager.default.removeItem(at: file) }
            let download = try await service.downloadFile(HTTPRequest(url: url), to: file,
                                                          options: DownloadOptions(resume: false, verifyIntegrity: false))
            let session = UploadSession(sessionURI: url, offset: 5, totalBytes: 100, chunkSize: 262_144, mimeType: "text/plain",
                                        file: nil, queryName: "files.insert", verifyIntegrity: true)
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.transport.tls = TLSConfiguration(clientCertificatePath: "/c.pem", clientKeyPath: "/k.pem", clientKeyPassword: "s3kr1t-pw")
            configuration.auth.apiKey = "s3kr1t-api-key"
            #expect("\(configuration)".contains("/k.pem") && !"\(configuration)".contains("s3kr1t"), "\(configuration)")
            let values: [Any] = [response, response.head, streamed, download, session]
            for value in values {
                for text in [String(describing: value), String(reflecting: value)] {
                    #expect(!text.contains("s3kr1t"), "\(text)")
                    #expect(text.contains(server.baseURL.host ?? "-"), "\(text)")
                }
            }
        }
    }
}
