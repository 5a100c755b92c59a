import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `courier sign-url`, as a user runs it: the binary, credentials from the environment.
@Suite struct SignURLCommandTests {
    static var courier: URL { LoadCommandTests.courier }
    /// Google's published test key (Tests/Conformance): the vectors' account.
    static let keyFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Conformance/googleapis-conformance-tests/test_service_account.not-a-test.json")

    /// Runs `body` with Application Default Credentials from `credentials` alone: an empty home of
    /// its own (no gcloud file), no metadata server unless `metadata` names one. The home is removed after.
    static func withEnvironment<T>(credentials: String?, metadata: String? = nil,
                                   _ body: ([String: String?]) async throws -> T) async throws -> T {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("sign-url-home-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        return try await body(["GOOGLE_APPLICATION_CREDENTIALS": credentials, "HOME": home.path, "CLOUDSDK_CONFIG": home.path,
                               "GCE_METADATA_HOST": metadata ?? "127.0.0.1:9", "STORAGE_EMULATOR_HOST": nil])
    }

    @Test func aKeyFileSignsLocally() async throws {
        try await Self.withEnvironment(credentials: Self.keyFile.path) { environment in
            let run = try await runProcess(Self.courier, ["sign-url", "gs://test-bucket/a b/c", "--duration", "15m", "--method", "PUT",
                                                          "--header", "content-type: text/plain"], timeout: 60, environment: environment)
            #expect(run.status == 0, "\(run.error)")
            let url = String(decoding: run.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(url.hasPrefix("https://storage.googleapis.com/test-bucket/a%20b/c?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential="
                + "test-iam-credentials%40dummy-project-id.iam.gserviceaccount.com%2F"), "\(url)")
            #expect(url.contains("&X-Goog-Expires=900&X-Goog-SignedHeaders=content-type%3Bhost&X-Goog-Signature="))
            #expect(url.split(separator: "=").last?.count == 512) // 2048-bit RSA, hex

            let policy = try await runProcess(Self.courier, ["sign-url", "gs://test-bucket/photo.jpg", "--post-policy",
                                                             "--field", "content-type=image/jpeg", "--max-size", "1000"],
                                              timeout: 60, environment: environment)
            #expect(policy.status == 0, "\(policy.error)")
            let object = try #require(try JSONSerialization.jsonObject(with: policy.output) as? [String: Any])
            #expect(object["url"] as? String == "https://storage.googleapis.com/test-bucket/")
            let fields = try #require(object["fields"] as? [String: String])
            #expect(fields["key"] == "photo.jpg" && fields["content-type"] == "image/jpeg" && fields["x-goog-signature"]?.count == 512)
            let document = try #require(fields["policy"].flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) })
            #expect(document.hasPrefix(#"{"conditions":[["content-length-range",0,1000],{"content-type":"image/jpeg"},{"bucket":"test-bucket"}"#))

            // --html: the same policy as a form to paste, the file input last as Cloud Storage requires.
            let form = try await runProcess(Self.courier, ["sign-url", "gs://test-bucket/photo.jpg", "--post-policy", "--html"],
                                            timeout: 60, environment: environment)
            #expect(form.status == 0, "\(form.error)")
            let page = String(decoding: form.output, as: UTF8.self)
            #expect(page.hasPrefix(#"<form id="upload" action="https://storage.googleapis.com/test-bucket/" method="post" enctype="multipart/form-data">"#), "\(page)")
            #expect(page.contains(#"<input type="hidden" name="key" value="photo.jpg">"#))
            let file = try #require(page.range(of: #"<input type="file" name="file">"#))
            #expect(page.ranges(of: #"type="hidden""#).allSatisfy { $0.upperBound < file.lowerBound })
        }
    }

    @Test func theMetadataServersAccountSignsThroughIAM() async throws {
        try await withTestServer { server in
            try await Self.withEnvironment(credentials: nil, metadata: server.metadataHost) { environment in
                let run = try await runProcess(Self.courier, ["sign-url", "gs://b/o", "--iam-endpoint", server.url("/iam").absoluteString],
                                               timeout: 60, environment: environment)
                #expect(run.status == 0, "\(run.error)")
                let url = String(decoding: run.output, as: UTF8.self)
                let email = server.metadata.email.replacingOccurrences(of: "@", with: "%40")
                #expect(url.hasPrefix("https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=\(email)%2F"), "\(url)")
                #expect(server.iam.signBlobCount == 1)
            }
        }
    }

    @Test func whatCannotBeSignedIsRefusedWithItsReason() async throws {
        try await Self.withEnvironment(credentials: Self.keyFile.path) { environment in
            for (arguments, reason) in [(["--duration", "8d"], "7 days"), (["--method", "PATCH"], "PATCH"), (["--header", "nocolon"], "name:value"),
                                      (["--html"], "--post-policy")] {
                let run = try await runProcess(Self.courier, ["sign-url", "gs://b/o"] + arguments, timeout: 60, environment: environment)
                #expect(run.status != 0)
                #expect(run.output.isEmpty)
                #expect(run.error.contains(reason), "\(run.error)")
            }
        }
        let user = FileManager.default.temporaryDirectory.appendingPathComponent("user-\(UUID()).json")
        try Data(#"{"type":"authorized_user","client_id":"c","client_secret":"s3kr1t-c","refresh_token":"s3kr1t-r"}"#.utf8).write(to: user)
        defer { try? FileManager.default.removeItem(at: user) }
        let run = try await Self.withEnvironment(credentials: user.path) { environment in
            try await runProcess(Self.courier, ["sign-url", "gs://b/o"], timeout: 60, environment: environment)
        }
        #expect(run.status != 0 && run.error.contains("signBlob") && !run.error.contains("s3kr1t"), "\(run.error)")
    }
}
