import Foundation

/// The universe a service and its credentials belong to (Google's AIP-4120): `googleapis.com`
/// for Google Cloud, another domain for a sovereign or partner cloud, whose APIs live at
/// `<api>.<universe domain>` and whose credentials are good nowhere else.
///
/// A service sends credentials only to its own universe: before an authorized request goes
/// out, the pipeline compares ``ServiceActor/Configuration/universeDomain`` with the
/// authorizer's ``Authorizer/universeDomain(context:)``, and a mismatch fails the request with
/// ``AuthError/universeMismatch`` without sending anything, as Google's libraries do.
public enum UniverseDomain {
    /// Google Cloud's universe, the default of services and credentials alike.
    public static let googleDefault = "googleapis.com"
    /// The variable that sets a service's universe when its configuration does not.
    public static let environmentVariable = "GOOGLE_CLOUD_UNIVERSE_DOMAIN"

    /// `text` when it can be a universe domain: a DNS name of letters, digits, hyphens and dots,
    /// at most 253 characters, no label empty. A credentials file's `universe_domain` becomes
    /// the host of its token endpoint, so anything else (a path, a port, a user) is refused.
    static func validated(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= 253 else { return nil }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty, label.utf8.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-") else { return nil }
            guard label.utf8.allSatisfy({ $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") }) else { return nil }
        }
        return text.lowercased()
    }

    /// A credentials file's `universe_domain`: the default when absent (as in every file made
    /// before universes existed), null or empty, as Google's libraries read it.
    static func inCredentials(_ object: JSONObject) throws(AuthError) -> String {
        guard let value = object["universe_domain"], !value.isNull else { return googleDefault }
        guard let text = value.stringValue else {
            throw AuthError(.invalidCredentials, message: "universe_domain is not a string")
        }
        if text.isEmpty { return googleDefault }
        guard let domain = validated(text) else {
            throw AuthError(.invalidCredentials, message: "universe_domain \(text.debugDescription) is not a domain name")
        }
        return domain
    }

    /// `root` moved into `universe`: a host under `googleapis.com` (`storage.googleapis.com`)
    /// becomes the same name under the universe (`storage.<universe>`); any other root (an
    /// emulator, a test server, a non-Google API) is kept as it is.
    static func root(_ root: URL, in universe: String) -> URL {
        guard universe != googleDefault, let host = root.host, host.hasSuffix(".\(googleDefault)"),
              var components = URLComponents(url: root, resolvingAgainstBaseURL: false)
        else { return root }
        components.host = String(host.dropLast(googleDefault.count)) + universe
        return components.url ?? root
    }
}
