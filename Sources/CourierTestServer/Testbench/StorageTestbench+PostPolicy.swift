import Foundation

/// Cloud Storage's form uploads (`POST /<bucket>/` as `multipart/form-data`) under a V4 signed
/// policy: the policy's signature by a trusted account, its expiry, and every condition —
/// exact values, `starts-with`, `eq`, `content-length-range` — and no form field the policy
/// does not name. Then the file is stored under the `key` field and the browser answered as
/// `success_action_redirect` or `success_action_status` ask (204 otherwise).
extension SignedURLVerifier {
    static func isFormUpload(_ call: APIRequest) -> Bool {
        call.method == "POST" && (call.header("Content-Type") ?? "").lowercased().hasPrefix("multipart/form-data")
            && call.rawPath.dropFirst().split(separator: "/").count == 1
    }

    func handleForm(_ call: APIRequest, store: StorageStore, now: Date = Date()) -> APIResponse {
        let bucket = String(call.rawPath.dropFirst().split(separator: "/").first ?? "").removingPercentEncoding ?? ""
        guard let (fields, file) = Self.formParts(call) else { return refuse(400, "InvalidArgument") }
        guard let file else { return refuse(400, "InvalidArgument") }
        guard let encoded = fields["policy"], let document = Data(base64Encoded: encoded),
              let policy = try? JSONSerialization.jsonObject(with: document) as? [String: Any],
              let conditions = policy["conditions"] as? [Any], let expiration = policy["expiration"] as? String,
              let credential = fields["x-goog-credential"], let signature = fields["x-goog-signature"]
        else { return refuse(400, "InvalidPolicyDocument") }
        guard let expires = ISO8601DateFormatter().date(from: expiration) else { return refuse(400, "InvalidPolicyDocument") }
        if now > expires { return refuse(400, "ExpiredToken") }
        guard verifySignature(hex: signature, of: Data(encoded.utf8), account: String(credential.split(separator: "/").first ?? "")) else {
            return refuse(403, "SignatureDoesNotMatch")
        }
        var values = fields
        values["bucket"] = bucket
        var named: Set<String> = ["bucket"]
        for condition in conditions {
            if let exact = condition as? [String: Any], exact.count == 1, let (name, value) = exact.first {
                named.insert(name.lowercased())
                guard values[name.lowercased()] == "\(value)" else { return refuse(403, "AccessDenied") }
            } else if let list = condition as? [Any], let operation = list.first as? String {
                switch operation {
                case "starts-with", "eq":
                    guard list.count == 3, let field = list[1] as? String, let expected = list[2] as? String, field.hasPrefix("$") else {
                        return refuse(400, "InvalidPolicyDocument")
                    }
                    let name = String(field.dropFirst()).lowercased()
                    named.insert(name)
                    let actual = values[name] ?? ""
                    guard operation == "eq" ? actual == expected : actual.hasPrefix(expected) else { return refuse(403, "AccessDenied") }
                case "content-length-range":
                    guard list.count == 3, let low = (list[1] as? NSNumber)?.intValue, let high = (list[2] as? NSNumber)?.intValue else {
                        return refuse(400, "InvalidPolicyDocument")
                    }
                    guard file.data.count >= low, file.data.count <= high else { return refuse(400, "EntityTooLarge") }
                default:
                    return refuse(400, "InvalidPolicyDocument")
                }
            } else {
                return refuse(400, "InvalidPolicyDocument")
            }
        }
        let exempt: Set<String> = ["policy", "x-goog-signature", "file"]
        for name in fields.keys where !exempt.contains(name) && !name.hasPrefix("x-ignore-") && !named.contains(name) {
            return refuse(403, "AccessDenied") // a field the policy does not name
        }
        guard let key = fields["key"], !key.isEmpty else { return refuse(400, "InvalidArgument") }
        let object = StorageStore.Object(bucket: bucket, name: key, generation: 0,
                                         contentType: fields["content-type"] ?? file.contentType ?? "application/octet-stream", media: file.data)
        let stored = store.insert(object, preconditions: APIRequest(method: "POST", rawPath: "", query: "", headers: [], body: Data()))
        guard stored.status == 200 else { return stored }
        if let redirect = fields["success_action_redirect"] {
            return APIResponse(status: 303, headers: [("Location", redirect)])
        }
        switch fields["success_action_status"] {
        case "200": return APIResponse(status: 200)
        case "201":
            return APIResponse(status: 201, headers: [("Content-Type", "application/xml")],
                               body: Data("<?xml version='1.0' encoding='UTF-8'?><PostResponse><Bucket>\(bucket)</Bucket><Key>\(key)</Key></PostResponse>".utf8))
        default: return APIResponse(status: 204)
        }
    }

    private func refuse(_ status: Int, _ code: String) -> APIResponse {
        refusals.withLock { $0[code, default: 0] += 1 }
        return APIResponse(status: status, headers: [("Content-Type", "application/xml")],
                           body: Data("<?xml version='1.0' encoding='UTF-8'?><Error><Code>\(code)</Code></Error>".utf8))
    }

    struct FilePart {
        var data: Data
        var contentType: String?
    }

    /// The form's text fields (names lower-cased) and its `file` part.
    static func formParts(_ call: APIRequest) -> ([String: String], FilePart?)? {
        guard let type = call.header("Content-Type"), let range = type.range(of: "boundary=") else { return nil }
        let boundary = String(type[range.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let delimiter = Data("--\(boundary)".utf8)
        var fields: [String: String] = [:]
        var file: FilePart?
        var parts: [Data] = []
        var cursor = call.body.startIndex
        while let found = call.body.range(of: delimiter, in: cursor..<call.body.endIndex) {
            if cursor != call.body.startIndex { parts.append(call.body[cursor..<found.lowerBound]) }
            cursor = found.upperBound
        }
        for part in parts {
            guard let split = part.range(of: Data("\r\n\r\n".utf8)) else { continue }
            let head = String(decoding: part[part.startIndex..<split.lowerBound], as: UTF8.self)
            var body = part[split.upperBound...]
            if body.suffix(2) == Data("\r\n".utf8) { body = body.dropLast(2) }
            guard let nameRange = head.range(of: "name=\"") else { continue }
            let name = String(head[nameRange.upperBound...].prefix { $0 != "\"" }).lowercased()
            if name == "file" {
                let contentType = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-type:") }
                    .map { String($0.dropFirst("content-type:".count)).trimmingCharacters(in: .whitespaces) }
                file = FilePart(data: Data(body), contentType: contentType)
            } else {
                fields[name] = String(decoding: body, as: UTF8.self)
            }
        }
        return (fields, file)
    }
}
