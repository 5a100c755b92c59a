/// Replaces credentials with `_snip_` wherever Courier prints a URL or header.
public enum Redaction {
    /// The text that stands in for a secret.
    public static let placeholder = "_snip_"

    /// Query parameters whose values are secrets. A resumable upload's `upload_id` is one: the
    /// session URI alone lets anyone upload into the session, without credentials.
    static let secretParameters: Set<String> = [
        "key", "access_token", "refresh_token", "id_token", "client_secret", "token", "code",
        "password", "assertion", "signature", "sig", "x-goog-signature", "api_key", "apikey", "upload_id",
        "subject_token", "actor_token",
    ]

    /// Headers whose values are secrets.
    static let secretHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-goog-api-key", "x-api-key",
    ]

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
        let pairs = afterQuery[..<fragmentStart].split(separator: "&", omittingEmptySubsequences: false)
        result += pairs.map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals].lowercased()
            return secretParameters.contains(name) ? "\(pair[..<equals])=\(placeholder)" : String(pair)
        }.joined(separator: "&")
        result += afterQuery[fragmentStart...]
        return result
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
        guard secretHeaders.contains(lowered) else { return value }
        if let space = value.firstIndex(of: " "), name.lowercased().hasSuffix("authorization") {
            return "\(value[..<space]) \(placeholder)"
        }
        return placeholder
    }

    /// `text` with credentials that stand inside free text replaced: `Bearer <token>` and
    /// `<secret parameter>=<value>` (after `?`, `&`, a space or at the start). Logged bodies go
    /// through it, so a server that echoes a request (its headers, its URL) leaks nothing.
    public static func text(_ text: String) -> String {
        guard text.contains("=") || text.contains("Bearer ") || text.contains("bearer ") else { return text }
        var result = ""
        var rest = Substring(text)
        while !rest.isEmpty {
            // A bearer token runs to the next space or quote.
            if let bearer = rest.range(of: "Bearer ", options: .caseInsensitive) {
                result += redactParameters(rest[..<bearer.upperBound])
                let token = rest[bearer.upperBound...].prefix { !$0.isWhitespace && $0 != "\"" && $0 != "," }
                result += token.isEmpty ? "" : placeholder
                rest = rest[token.endIndex...]
            } else {
                result += redactParameters(rest)
                break
            }
        }
        return result
    }

    /// `name=value` pairs with a secret name, wherever they start a word or follow `?` or `&`.
    private static func redactParameters(_ text: Substring) -> String {
        guard text.contains("=") else { return String(text) }
        var result = ""
        var index = text.startIndex
        var wordStart = true
        while index < text.endIndex {
            let character = text[index]
            if wordStart, let equals = text[index...].firstIndex(where: { $0 == "=" || $0 == "&" || $0 == "?" || $0.isWhitespace }),
               text[equals] == "=", secretParameters.contains(text[index..<equals].lowercased()) {
                result += text[index...equals] + placeholder
                index = text[text.index(after: equals)...].firstIndex { $0 == "&" || $0 == "#" || $0.isWhitespace || $0 == "\"" }
                    ?? text.endIndex
                wordStart = false
                continue
            }
            result.append(character)
            wordStart = character == "?" || character == "&" || character.isWhitespace
            index = text.index(after: index)
        }
        return result
    }
}
