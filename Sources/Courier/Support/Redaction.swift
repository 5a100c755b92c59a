import Logging

/// Replaces credentials with `_snip_` wherever Courier prints a URL or header.
public enum Redaction {
    /// The text that stands in for a secret.
    public static let placeholder = "_snip_"

    /// The one list of names whose values are secrets, wherever a name stands: a header, a URL
    /// parameter, a form field, a JSON member, a `name=value` in free text. ``isSecret(_:)``
    /// compares without case, `_` or `-`, so `access_token`, `accessToken` and `Access-Token`
    /// are one name. A resumable upload's `upload_id` is one: the session URL alone lets anyone
    /// upload into the session, without credentials.
    public static let secretNames: [String] = [
        // OAuth 2, Google's token exchange and service-account keys
        "access_token", "refresh_token", "id_token", "client_secret", "code", "assertion", "signed_jwt",
        "subject_token", "actor_token", "private_key", "private_key_id", "token", "password",
        // sign-in: PKCE's verifier (the code is above), the device flow's code
        "code_verifier", "device_code",
        // AWS keys as the metadata service and the environment name them; IMDSv2's session token
        "secret_access_key", "aws_secret_access_key", "session_token", "x-amz-security-token", "x-aws-ec2-metadata-token",
        // API keys and signed URLs
        "key", "api_key", "x-goog-api-key", "x-api-key", "signature", "sig", "x-goog-signature", "signed_blob",
        // customer-supplied encryption keys: Cloud Storage's and S3's headers carry the key itself
        "x-goog-encryption-key", "x-goog-copy-source-encryption-key", "x-amz-server-side-encryption-customer-key",
        "x-amz-copy-source-server-side-encryption-customer-key",
        // sessions and credentials in headers; Identity Platform's session cookie (a signed JWT)
        "upload_id", "authorization", "proxy-authorization", "cookie", "set-cookie", "session_cookie",
        // secrets Google's APIs return or accept in bodies, named as their Discovery documents name
        // them: IAM's new service-account key, API Keys' key string, GKE's client key, Cloud KMS's
        // plaintext, Identity Toolkit's hashes, keys and TOTP secret, reCAPTCHA's secret key,
        // Gmail's and Managed AD's PKCS #12 bundles, key files, a conference's passcode, access
        // code and PIN (Calendar, Meet; also a wallet card's and a second factor's PIN), the
        // assertion Agent Identity exchanges
        "secret_value", "private_key_data", "key_string", "client_key", "plaintext", "password_hash", "signer_key",
        "shared_secret_key", "legacy_secret_key", "certificate_pfx", "pkcs12", "private_key_file", "ssl_key_file",
        "debug_token", "mfa_pending_credential", "passcode", "access_code", "pin", "source_credential",
    ]

    /// Endings that make a name secret whatever comes before: `secret` (`clientSecret`,
    /// `sharedSecret`, Cloud Storage's HMAC `secret`), `password` (`rootPassword`,
    /// `keyStorePassword`), `private_key` (`certPrivateKey`), `passphrase`, `api_key`
    /// (`mapsApiKey`, `X-Goog-Api-Key`) and `token` (`oauth_token`, every Google API's standard
    /// parameter; `idToken`, `sasToken`, `X-Auth-Token`, `X-Vault-Token`, GitLab's
    /// `PRIVATE-TOKEN`). A name that only refers to a secret ends otherwise
    /// (`passwordSecretVersion`, `secretName`) and is kept, as are the cursors of
    /// ``publicEndings``. Compared as ``isSecret(_:)`` compares, so `CLIENT_SECRET` and
    /// `client-secret` end so too.
    public static let secretEndings: [String] = ["secret", "password", "private_key", "passphrase", "api_key", "token"]

    /// Endings that keep a name shown although it ends as a secret does: the opaque cursors
    /// Google's APIs hand back to be sent again, which grant nothing by themselves and which a
    /// log of paging or syncing needs (`pageToken`, `nextPageToken`, `startPageToken`,
    /// `nextSyncToken`, Cloud Storage's `rewriteToken`, Spanner's `partitionToken`). Read off
    /// the names ending in `token` across the Discovery documents (`Scripts/secret-fields.py`
    /// lists them). Also Cloud Storage's `x-goog-gcs-idempotency-token`: a random ID that
    /// `x-goog-api-client` repeats and a log needs to match attempts with the server's. A name
    /// of ``secretNames`` stays secret whatever it ends with.
    public static let publicEndings: [String] = [
        "page_token", "sync_token", "continuation_token", "resume_token", "rewrite_token", "restore_token",
        "consistency_token", "partition_token", "sequence_token", "version_token", "wait_token", "attribution_token",
        "idempotency_token",
    ]

    /// Members secret only inside a parent of that name, as `parent.member`: Secret Manager's
    /// `payload.data`, a secret version's whole content, where `data` alone is any data.
    public static let secretMembers: [String] = ["payload.data"]

    private static let normalizedSecretNames = Set(secretNames.map(normalized))
    private static let normalizedEndings = secretEndings.map(normalized)
    private static let normalizedPublicEndings = publicEndings.map(normalized)
    private static let normalizedMembers: [String: Set<String>] = secretMembers.reduce(into: [:]) { table, path in
        let parts = path.split(separator: ".")
        table[normalized(parts[0]), default: []].insert(normalized(parts[1]))
    }

    /// Whether the value of `name` is a secret: the one scanner of ``secretNames``, the names
    /// added with ``addSecretNames(_:)``, ``secretEndings`` and ``publicEndings``.
    public static func isSecret(_ name: some StringProtocol) -> Bool {
        let name = normalized(name)
        if normalizedSecretNames.contains(name) || AddedSecretNames.contain(name) { return true }
        guard normalizedEndings.contains(where: { name.hasSuffix($0) }) else { return false }
        return !normalizedPublicEndings.contains { name.hasSuffix($0) }
    }

    /// Adds names whose values are secrets, for the whole process and from then on: an API's
    /// own credential header or body field that neither ``secretNames`` nor ``secretEndings``
    /// covers (`X-Tenant-Key`, `licenseCode`). Every place Courier prints through ``isSecret(_:)``
    /// hides them at once: the HTTP log, log lines, spans, errors, descriptions and
    /// `courier load`'s outputs. Names are compared as ``isSecret(_:)`` compares; there is no
    /// removal, so a value hidden once is never shown later.
    public static func addSecretNames(_ names: some Sequence<String>) {
        AddedSecretNames.add(names.map { normalized($0) })
    }

    /// Whether the JSON member `name` of an object that is the value of `parent` is a secret:
    /// ``isSecret(_:)``, or a pair of ``secretMembers``.
    public static func isSecret(_ name: some StringProtocol, in parent: (some StringProtocol)?) -> Bool {
        if isSecret(name) { return true }
        guard let parent, let members = normalizedMembers[normalized(parent)] else { return false }
        return members.contains(normalized(name))
    }

    private static func normalized(_ name: some StringProtocol) -> String {
        String(name.lowercased().filter { $0 != "_" && $0 != "-" })
    }

    /// `url` with the values of secret query parameters and any user info replaced.
    public static func url(_ url: String) -> String {
        var text = Substring(url)
        var result = ""
        // user:password@ in the authority
        if let schemeEnd = text.range(of: "://") {
            let authorityStart = schemeEnd.upperBound
            let rest = text[authorityStart...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                result += text[..<authorityStart] + placeholder
                text = text[at...]
            }
        }
        guard let question = text.firstIndex(of: "?") else { return result + text }
        result += text[...question]
        let afterQuery = text[text.index(after: question)...]
        let fragmentStart = afterQuery.firstIndex(of: "#") ?? afterQuery.endIndex
        result += form(afterQuery[..<fragmentStart])
        result += afterQuery[fragmentStart...]
        return result
    }

    /// `name=value&…` (a URL's query, a form body) with the values of secret names replaced.
    public static func form(_ text: some StringProtocol) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            return isSecret(pair[..<equals]) ? "\(pair[..<equals])=\(placeholder)" : String(pair)
        }.joined(separator: "&")
    }

    /// Headers whose values are URLs, which may carry secrets in their query: a resumable
    /// upload's `Location` names its session (`upload_id`).
    static let urlHeaders: Set<String> = ["location", "content-location", "x-goog-upload-url", "x-goog-upload-control-url"]

    /// `value`, or the placeholder when `name` carries credentials. The auth scheme of an
    /// Authorization header is kept (`Bearer _snip_`) because it helps debugging; URL-valued
    /// headers keep their URL with its secret parameters replaced.
    public static func headerValue(name: String, value: String) -> String {
        let lowered = name.lowercased()
        if urlHeaders.contains(lowered) { return url(value) }
        guard isSecret(lowered) else { return value }
        if let space = value.firstIndex(of: " "), lowered.hasSuffix("authorization") {
            return "\(value[..<space]) \(placeholder)"
        }
        return placeholder
    }

    /// `text` with the credentials that stand in free text replaced: `Bearer <token>`, and the
    /// value of a secret name in each shape a name takes in text: `name=value` (a URL, a form),
    /// `"name": "value"` (JSON, also when echoed inside a string) and `name: value` starting a
    /// line (an HTTP header). Logged bodies go through it, so a server that echoes a request (its
    /// headers, its URL, its body) leaks nothing.
    public static func text(_ text: String) -> String {
        guard text.contains(where: { $0 == "=" || $0 == ":" }) || text.range(of: "bearer ", options: .caseInsensitive) != nil
        else { return text }
        return bearerTokens(pairs(in: Substring(text)))
    }

    /// `Bearer <token>`: the token runs to the next space, quote or comma.
    private static func bearerTokens(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let bearer = rest.range(of: "Bearer ", options: .caseInsensitive) {
            result += rest[..<bearer.upperBound]
            let token = rest[bearer.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" && $0 != "," }
            result += token.isEmpty ? "" : placeholder
            rest = rest[token.endIndex...]
        }
        return result + rest
    }

    /// `text` with the value of every pair whose name is secret replaced.
    private static func pairs(in text: Substring) -> String {
        var result = ""
        var index = text.startIndex
        var wordStart = true
        var lineStart = true
        while index < text.endIndex {
            if let value = secretValue(in: text, at: index, wordStart: wordStart, lineStart: lineStart) {
                result += text[index..<value.lowerBound] + placeholder
                index = value.upperBound
                (wordStart, lineStart) = (false, false)
                continue
            }
            let character = text[index]
            result.append(character)
            wordStart = character == "?" || character == "&" || character.isWhitespace
            lineStart = character.isNewline
            index = text.index(after: index)
        }
        return result
    }

    /// Where the value of a secret pair starting at `index` lies: `"name": "value"` anywhere,
    /// `name=value` where a word starts, `name: value` (to the end of the line) where a line starts.
    private static func secretValue(in text: Substring, at index: Substring.Index, wordStart: Bool, lineStart: Bool)
        -> Range<Substring.Index>?
    {
        func skipBlanks(_ from: Substring.Index) -> Substring.Index {
            text[from...].firstIndex { $0 != " " && $0 != "\t" } ?? text.endIndex
        }
        if text[index] == "\"" {
            let nameStart = text.index(after: index)
            guard let nameEnd = text[nameStart...].firstIndex(where: { $0 == "\"" || $0.isWhitespace }), text[nameEnd] == "\"",
                  isSecret(text[nameStart..<nameEnd]) else { return nil }
            let colon = skipBlanks(text.index(after: nameEnd))
            guard colon < text.endIndex, text[colon] == ":" else { return nil }
            let quote = skipBlanks(text.index(after: colon))
            guard quote < text.endIndex, text[quote] == "\"" else { return nil } // a number or an object: no credential
            let valueStart = text.index(after: quote)
            var end = valueStart
            while end < text.endIndex, text[end] != "\"" {
                if text[end] == "\\", text.index(after: end) < text.endIndex { end = text.index(after: end) } // an escaped quote
                end = text.index(after: end)
            }
            return valueStart..<end
        }
        guard wordStart || lineStart,
              let nameEnd = text[index...].firstIndex(where: { "=:&?\"".contains($0) || $0.isWhitespace }), nameEnd > index,
              isSecret(text[index..<nameEnd]) else { return nil }
        let valueStart = text.index(after: nameEnd)
        if text[nameEnd] == "=" {
            return valueStart..<(text[valueStart...].firstIndex { "&#\"".contains($0) || $0.isWhitespace } ?? text.endIndex)
        }
        guard text[nameEnd] == ":", lineStart else { return nil }
        var start = skipBlanks(valueStart)
        let end = text[start...].firstIndex { $0.isNewline } ?? text.endIndex
        // An Authorization header keeps its scheme, as in headerValue(name:value:).
        if text[index..<nameEnd].lowercased().hasSuffix("authorization"), let space = text[start..<end].firstIndex(of: " ") {
            start = text.index(after: space)
        }
        return start..<end
    }
}

extension Redaction {
    /// Metadata for Courier's own log lines: each value through ``text(_:)`` (an error's
    /// description, a request, a reason), and the value under a secret name replaced whole.
    static func metadata(_ pairs: KeyValuePairs<String, String>) -> Logger.Metadata {
        var metadata = Logger.Metadata(minimumCapacity: pairs.count)
        for (key, value) in pairs { metadata[key] = .string(isSecret(key) ? placeholder : text(value)) }
        return metadata
    }
}
