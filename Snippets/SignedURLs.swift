// Cloud Storage V4 signed URLs and a POST policy, signed two ways: with a service account's key,
// and with no key at all, through IAM Credentials' signBlob as the metadata server's account
// (the embedded test server fakes the metadata server and IAM Credentials).
import Courier
import CourierTestServer
import CourierTesting
import Foundation
import GoogleStorage

let server = try await TestServer.start()

// 1. A service account key (here a throwaway one) signs locally, with no request at all.
let account = try TestServiceAccount(tokenURL: server.url("/token"))
let download = try await StorageSigning.signedURL(
    bucket: "my-bucket", object: "reports/2026 Q3.pdf",
    options: SignedURLOptions(expiration: .seconds(15 * 60)), signer: account.key)
print("GET for 15 minutes:", download.absoluteString.prefix(120), "…")

// A PUT the browser must send with this Content-Type, and a resumable upload's start.
let upload = try await StorageSigning.signedURL(
    bucket: "my-bucket", object: "incoming/photo.jpg",
    options: SignedURLOptions(method: "PUT", headers: ["Content-Type": "image/jpeg"]), signer: account.key)
print("PUT:", upload.absoluteString.prefix(100), "…")
let resumable = try await StorageSigning.signedURL(bucket: "my-bucket", object: "big.bin",
                                                   options: .resumableUpload(), signer: account.key)
print("resumable start:", resumable.absoluteString.prefix(100), "…")

// A POST policy: the fields of an HTML form that uploads at most 10 MB of image/jpeg.
let policy = try await StorageSigning.postPolicy(
    bucket: "my-bucket", object: "uploads/avatar.jpg",
    options: PostPolicyOptions(fields: ["content-type": "image/jpeg", "success_action_status": "201"],
                               conditions: [.contentLengthRange(0...10_000_000)]),
    signer: account.key)
print("form posts to", policy.url, "with fields", policy.fields.keys.sorted().joined(separator: ", "))
print(policy.htmlForm())   // the form to serve: hidden fields, then the file input

// 2. No key: on Cloud Run, GKE or Compute Engine the credentials come from the metadata server,
// and the signature from IAM Credentials' signBlob (a request through the service's pipeline).
let metadata = MetadataServerAuthorizer(environment: ["GCE_METADATA_HOST": server.metadataHost])
let signer = try BlobSigners.signer(for: metadata, iamEndpoint: server.url("/iam"))
try await withService { service in
    let url = try await StorageSigning.signedURL(bucket: "my-bucket", object: "shared.txt",
                                                 options: SignedURLOptions(), signer: signer, through: service)
    print("signed by", try await signer.signingAccount(through: service), "through signBlob:", url.absoluteString.prefix(80), "…")
}

// 3. What cannot be signed says so, and signs nothing.
do {
    _ = try await StorageSigning.signedURL(bucket: "my-bucket", object: "x",
                                           options: SignedURLOptions(expiration: .seconds(8 * 86400)), signer: account.key)
} catch let error as SignedURLError {
    print(error)
}
await server.stop()
