import Courier
import CourierTestServer
import CourierTesting
import CourierTestSupport
import Foundation
import GoogleStorage
import Testing

/// Signed URLs used as a browser or another service uses them: plain requests with no
/// credentials, against the testbench's XML API, which checks V4 signatures itself.
@Suite struct SignedURLEndToEndTests {
    /// The testbench with bucket `signed`, a service with no authorizer, and a throwaway account it trusts.
    static func withTestbench(_ body: (StorageTestbench, ServiceActor, TestServiceAccount) async throws -> Void) async throws {
        let testbench = try await StorageTestbench.start()
        testbench.createBucket("signed")
        let account = try TestServiceAccount(email: "signer@test-project.iam.gserviceaccount.com",
                                             tokenURL: testbench.baseURL.appendingPathComponent("token"), keyPair: .sharedInProcess)
        do {
            try testbench.trust(account: account.email, publicKeyPEM: account.publicKeyPEM)
            try await withCheckedService(configuration: .suite()) { try await body(testbench, $0, account) }
            await testbench.stop()
        } catch {
            await testbench.stop()
            throw error
        }
    }

    static func options(_ method: String, headers: [String: String] = [:], on testbench: StorageTestbench,
                        date: Date? = nil, expiration: Duration = .seconds(600)) -> SignedURLOptions {
        SignedURLOptions(method: method, expiration: expiration, headers: headers, endpoint: testbench.baseURL.absoluteString, date: date)
    }

    @Test func uploadWithASignedPutAndDownloadWithASignedGet() async throws {
        try await Self.withTestbench { testbench, service, account in
            let contents = Data("signed bytes, no credentials\n".utf8)
            let put = try await StorageSigning.signedURL(
                bucket: "signed", object: "dir/a file é.txt",
                options: Self.options("PUT", headers: ["Content-Type": "text/plain"], on: testbench), signer: account.key)
            var upload = HTTPRequest(method: .put, url: put)
            upload.headers["Content-Type"] = "text/plain"
            upload.body = .data(contents)
            let stored = try await service.send(upload)
            #expect(stored.status == 200, "\(String(decoding: stored.body, as: UTF8.self))")
            #expect(testbench.contents(bucket: "signed", name: "dir/a file é.txt") == contents)

            let get = try await StorageSigning.signedURL(bucket: "signed", object: "dir/a file é.txt",
                                                         options: Self.options("GET", on: testbench), signer: account.key)
            let downloaded = try await service.send(HTTPRequest(url: get))
            #expect(downloaded.status == 200)
            #expect(downloaded.body == contents)

            // The PUT without its signed Content-Type, and the GET URL for another object, are refused.
            var unsigned = HTTPRequest(method: .put, url: put)
            unsigned.body = .data(contents)
            #expect(try await service.send(unsigned).status == 403)
            let other = try #require(URL(string: get.absoluteString.replacingOccurrences(of: "/signed/dir/", with: "/signed/elsewhere/")))
            #expect(try await service.send(HTTPRequest(url: other)).status == 403)
            #expect(testbench.signedURLRefusals("SignatureDoesNotMatch") == 2)
        }
    }

    @Test func aURLPastItsExpiryIsRefused() async throws {
        try await Self.withTestbench { testbench, service, account in
            testbench.createObject(bucket: "signed", name: "o", contents: Data("x".utf8))
            let expired = try await StorageSigning.signedURL(
                bucket: "signed", object: "o",
                options: Self.options("GET", on: testbench, date: Date().addingTimeInterval(-120), expiration: .seconds(60)),
                signer: account.key)
            let response = try await service.send(HTTPRequest(url: expired))
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self).contains("ExpiredToken"))
            #expect(testbench.signedURLRefusals("ExpiredToken") == 1)
            // The same object through a URL still in its time.
            let fresh = try await StorageSigning.signedURL(bucket: "signed", object: "o", options: Self.options("GET", on: testbench),
                                                           signer: account.key)
            #expect(try await service.send(HTTPRequest(url: fresh)).body == Data("x".utf8))
        }
    }

    @Test func aURLSignedThroughSignBlobVerifies() async throws {
        try await withTestServer { server in
            try await Self.withTestbench { testbench, service, _ in
                testbench.createObject(bucket: "signed", name: "from-metadata", contents: Data("m".utf8))
                let metadata = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
                let signer = try BlobSigners.signer(for: metadata, iamEndpoint: server.url("/iam"))
                try testbench.trust(account: server.metadata.email, publicKeyPEM: server.iam.signingPublicKeyPEM())
                let url = try await StorageSigning.signedURL(bucket: "signed", object: "from-metadata",
                                                             options: Self.options("GET", on: testbench), signer: signer, through: service)
                let response = try await service.send(HTTPRequest(url: url))
                #expect(response.status == 200 && response.body == Data("m".utf8))
                #expect(server.iam.signBlobCount == 1)
            }
        }
    }

    /// The request a browser makes when a form with `fields` and a file input is submitted.
    static func formPost(to url: URL, fields: [String: String], file: Data) -> HTTPRequest {
        let boundary = "----courier-form-\(UUID().uuidString)"
        var body = Data()
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"avatar.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
        body += file + Data("\r\n--\(boundary)--\r\n".utf8)
        var request = HTTPRequest(method: .post, url: url)
        request.headers["Content-Type"] = "multipart/form-data; boundary=\(boundary)"
        request.body = .data(body)
        return request
    }

    @Test func aFormUploadUnderASignedPolicyIsStoredAndItsConditionsHold() async throws {
        try await Self.withTestbench { testbench, service, account in
            let policy = try await StorageSigning.postPolicy(
                bucket: "signed", object: "uploads/avatar.jpg",
                options: PostPolicyOptions(fields: ["content-type": "image/jpeg", "success_action_status": "201"],
                                           conditions: [.contentLengthRange(0...100), .startsWith(field: "$key", prefix: "uploads/")],
                                           endpoint: testbench.baseURL.absoluteString),
                signer: account.key)
            let image = Data(repeating: 0xFF, count: 100)
            let stored = try await service.send(Self.formPost(to: policy.url, fields: policy.fields, file: image))
            #expect(stored.status == 201, "\(String(decoding: stored.body, as: UTF8.self))")
            #expect(testbench.contents(bucket: "signed", name: "uploads/avatar.jpg") == image)

            // A file past content-length-range, a field the policy does not name, a changed
            // field's value and a forged signature: each refused, nothing stored.
            var forged = policy.fields
            forged["x-goog-signature"] = String(repeating: "00", count: 256)
            let refused: [([String: String], Data, Int)] = [
                (policy.fields.merging(["key": "uploads/big.jpg"]) { $1 }, Data(count: 101), 400),
                (policy.fields.merging(["key": "uploads/extra.jpg", "acl": "public-read"]) { $1 }, image, 403),
                (policy.fields.merging(["key": "uploads/type.jpg", "content-type": "text/html"]) { $1 }, image, 403),
                (forged.merging(["key": "uploads/forged.jpg"]) { $1 }, image, 403),
            ]
            for (fields, file, status) in refused {
                let response = try await service.send(Self.formPost(to: policy.url, fields: fields, file: file))
                #expect(response.status == status, "\(fields["key"] ?? ""): \(String(decoding: response.body, as: UTF8.self))")
                #expect(testbench.contents(bucket: "signed", name: fields["key"] ?? "") == nil)
            }
            #expect(testbench.signedURLRefusals("EntityTooLarge") == 1)
            #expect(testbench.signedURLRefusals("SignatureDoesNotMatch") == 1)
        }
    }

    /// The same policies submitted by a real browser: headless Chromium loads a page holding two
    /// forms from `htmlForm()`, each with a file the page makes, and submits both (each into a
    /// frame of its own). The file within `content-length-range` is stored; the one past it is
    /// refused and nothing is stored.
    @Test func aFormSubmittedByABrowserIsStoredAndOnePastItsConditionIsRefused() async throws {
        try await Self.withTestbench { testbench, _, account in
            let options = PostPolicyOptions(fields: ["content-type": "image/jpeg", "success_action_status": "201"],
                                            conditions: [.contentLengthRange(0...100)], endpoint: testbench.baseURL.absoluteString)
            let within = try await StorageSigning.postPolicy(bucket: "signed", object: "browser/avatar.jpg", options: options,
                                                             signer: account.key)
            let past = try await StorageSigning.postPolicy(bucket: "signed", object: "browser/big.jpg", options: options,
                                                           signer: account.key)
            let page = FileManager.default.temporaryDirectory.appendingPathComponent("courier-policy-\(UUID().uuidString).html")
            try Data("""
                <!doctype html><meta charset="utf-8"><title>upload</title>
                \(within.htmlForm(id: "within", submitLabel: nil))\(past.htmlForm(id: "past", submitLabel: nil))
                <iframe name="within-frame"></iframe><iframe name="past-frame"></iframe>
                <script>
                  for (const [id, size] of [["within", 100], ["past", 101]]) {
                    const form = document.getElementById(id);
                    const files = new DataTransfer();
                    files.items.add(new File([new Uint8Array(size).fill(0xFF)], "avatar.jpg", { type: "image/jpeg" }));
                    form.querySelector("input[type=file]").files = files.files;
                    form.target = id + "-frame";
                    form.submit();
                  }
                </script>
                """.utf8).write(to: page)
            defer { try? FileManager.default.removeItem(at: page) }

            let settled = try await withChromium(showing: page) {
                await eventually(within: 60) {
                    testbench.contents(bucket: "signed", name: "browser/avatar.jpg") != nil
                        && testbench.signedURLRefusals("EntityTooLarge") == 1
                }
            }
            #expect(settled, "the browser's uploads did not both arrive within 60 s")
            #expect(testbench.contents(bucket: "signed", name: "browser/avatar.jpg") == Data(repeating: 0xFF, count: 100))
            #expect(testbench.contents(bucket: "signed", name: "browser/big.jpg") == nil)
            #expect(testbench.signedURLRefusals("SignatureDoesNotMatch") == 0)
        }
    }
}
