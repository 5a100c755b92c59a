import COpenSSL
import CourierSync
import Foundation

/// Cloud Storage's XML API as far as V4 signed URLs reach it: `PUT` and `GET` of
/// `/<bucket>/<object>` carrying `X-Goog-Signature`, checked as Cloud Storage checks them — the
/// algorithm, the credential's scope, the expiry, the signed headers' values and the RSA
/// signature by a key the account was registered with (``StorageTestbench/trust(account:publicKeyPEM:)``).
/// Written from Google's description of V4 signing, apart from Courier's signer, so that one
/// cannot share a misreading with the other.
final class SignedURLVerifier: Sendable {
    private let keys = LockedValue([String: RSAPublicKey]())
    /// Requests refused, by reason (`SignatureDoesNotMatch`, `ExpiredToken` …), for tests.
    let refusals = LockedValue([String: Int]())

    func trust(account: String, publicKeyPEM: String) throws {
        let key = try RSAPublicKey(pemRepresentation: publicKeyPEM)
        keys.withLock { $0[account] = key }
    }

    static func isSigned(_ call: APIRequest) -> Bool { call.query.contains("X-Goog-Signature=") }

    /// The XML API's answer to a signed request.
    func handle(_ call: APIRequest, authority: String?, store: StorageStore, now: Date = Date()) -> APIResponse {
        if let refusal = verify(call, authority: authority, now: now) {
            refusals.withLock { $0[refusal.code, default: 0] += 1 }
            return APIResponse(status: refusal.status, headers: [("Content-Type", "application/xml")],
                               body: Data("<?xml version='1.0' encoding='UTF-8'?><Error><Code>\(refusal.code)</Code></Error>".utf8))
        }
        let segments = call.rawPath.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard segments.count == 2, let bucket = String(segments[0]).removingPercentEncoding,
              let name = String(segments[1]).removingPercentEncoding, !name.isEmpty
        else { return APIResponse(status: 400, body: Data("a signed request names /bucket/object".utf8)) }
        switch call.method {
        case "PUT":
            let object = StorageStore.Object(bucket: bucket, name: name, generation: 0,
                                             contentType: call.header("Content-Type") ?? "application/octet-stream", media: call.body)
            let stored = store.insert(object, preconditions: APIRequest(method: "PUT", rawPath: "", query: "", headers: [], body: Data()))
            return APIResponse(status: stored.status == 200 ? 200 : stored.status, body: stored.status == 200 ? Data() : stored.body)
        case "GET":
            let object = store.state.withLock { $0.buckets[bucket]?.objects[name] }
            guard let object else { return APIResponse(status: 404, body: Data("<Error><Code>NoSuchKey</Code></Error>".utf8)) }
            return APIResponse(status: 200, headers: [("Content-Type", object.contentType)], body: object.media)
        default:
            return APIResponse(status: 405)
        }
    }

    struct Refusal {
        var status: Int
        var code: String
    }

    func verify(_ call: APIRequest, authority: String?, now: Date) -> Refusal? {
        var parameters: [(name: String, value: String)] = []
        for pair in call.query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).removingPercentEncoding ?? String($0)
            }
            parameters.append((parts[0], parts.count > 1 ? parts[1] : ""))
        }
        func value(_ name: String) -> String? { parameters.first { $0.name == name }?.value }
        guard value("X-Goog-Algorithm") == "GOOG4-RSA-SHA256", let credential = value("X-Goog-Credential"),
              let stamp = value("X-Goog-Date"), let expires = value("X-Goog-Expires").flatMap(Int.init),
              let signedHeaders = value("X-Goog-SignedHeaders"), let signatureHex = value("X-Goog-Signature")
        else { return Refusal(status: 400, code: "AuthorizationQueryParametersError") }
        let scope = credential.split(separator: "/")
        guard scope.count == 5, scope[2] == "auto", scope[3] == "storage", scope[4] == "goog4_request",
              stamp.count == 16, stamp.hasPrefix(scope[1]), expires > 0, expires <= 604_800
        else { return Refusal(status: 400, code: "AuthorizationQueryParametersError") }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        guard let start = formatter.date(from: stamp) else { return Refusal(status: 400, code: "AuthorizationQueryParametersError") }
        if now > start.addingTimeInterval(TimeInterval(expires)) { return Refusal(status: 400, code: "ExpiredToken") }
        if now < start.addingTimeInterval(-900) { return Refusal(status: 400, code: "RequestNotYetValid") }

        // The canonical request, rebuilt from what arrived.
        let encode: (String) -> String = { text in
            text.utf8.map { byte -> String in
                let c = Character(Unicode.Scalar(byte))
                return (c.isASCII && (c.isLetter || c.isNumber || "-_.~".contains(c))) ? String(c) : String(format: "%%%02X", byte)
            }.joined()
        }
        let query = parameters.filter { $0.name != "X-Goog-Signature" }
            .map { (encode($0.name), encode($0.value)) }
            .sorted { $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        var headerLines: [String] = []
        for name in signedHeaders.split(separator: ";").map(String.init) {
            var received: String?
            if name == "host" {
                received = (authority ?? call.header("Host")).map { host in host.split(separator: ":").first.map(String.init) ?? host }
            } else {
                received = call.headers.filter { $0.0.lowercased() == name }.map(\.1).joined(separator: ",")
                if received == "" { received = nil }
            }
            guard let received else { return Refusal(status: 403, code: "SignatureDoesNotMatch") }
            headerLines.append("\(name):\(received.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " "))")
        }
        let payload = call.header("x-goog-content-sha256").flatMap { _ in
            signedHeaders.split(separator: ";").contains("x-goog-content-sha256") ? call.header("x-goog-content-sha256") : nil
        } ?? "UNSIGNED-PAYLOAD"
        let canonical = "\(call.method)\n\(call.rawPath)\n\(query)\n\(headerLines.joined(separator: "\n"))\n\n\(signedHeaders)\n\(payload)"
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(canonical.utf8)
        _ = courier_sha256(bytes, bytes.count, &digest)
        let toSign = "GOOG4-RSA-SHA256\n\(stamp)\n\(scope[1...].joined(separator: "/"))\n" + digest.map { String(format: "%02x", $0) }.joined()

        guard verifySignature(hex: signatureHex, of: Data(toSign.utf8), account: String(scope[0])) else {
            return Refusal(status: 403, code: "SignatureDoesNotMatch")
        }
        return nil
    }

    /// Whether `hex` is `account`'s RS256 signature of `data`, by a key it was registered with.
    func verifySignature(hex: String, of data: Data, account: String) -> Bool {
        var signature: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            guard let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), let byte = UInt8(hex[index..<next], radix: 16) else {
                return false
            }
            signature.append(byte)
            index = next
        }
        guard let key = keys.withLock({ $0[account] }) else { return false }
        return key.isValidRS256Signature(Data(signature), for: data)
    }
}
