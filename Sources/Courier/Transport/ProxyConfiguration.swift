/// Which proxy requests go through: the one the environment names (the default), none, or one
/// given here.
///
/// The environment is read once, when the service starts, as Go's `net/http` does, not for
/// every request as libcurl does on its own: libcurl 7.88 looks up five or six variables per
/// request, each a walk over the whole environment (about 2,000 instructions per request with
/// 38 variables, 5,000 with 138, a size Kubernetes reaches by itself; Docs/Performance.md, "Decisions").
/// A variable set or changed after the service started is not seen.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible {
    enum Choice: Hashable {
        case environment
        case none
        case proxy(url: String, excluding: [String])
    }

    let choice: Choice

    /// The proxy the environment names, with libcurl's rules: `http_proxy` for http (only in lower
    /// case, as libcurl reads it: CGI servers set `HTTP_PROXY` from a request header), `https_proxy`
    /// or `HTTPS_PROXY` for https, then `all_proxy` or `ALL_PROXY`; hosts in `no_proxy` or
    /// `NO_PROXY` go direct. With none of the proxy variables set, requests go direct. The default.
    public static let environment = ProxyConfiguration(choice: .environment)

    /// Every request goes direct, whatever the environment says.
    public static let none = ProxyConfiguration(choice: .none)

    /// Every request goes through `url` (`http://host:port`; a user and password in the URL
    /// authenticate to the proxy and are never logged), except requests to a host in
    /// `excluding`: host names, which also match their subdomains, IP addresses, or `*` for
    /// every host (libcurl's `CURLOPT_NOPROXY`). An https request tunnels through the proxy
    /// with `CONNECT`, so the proxy sees its host, not its content.
    public static func url(_ url: String, excluding hosts: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(choice: .proxy(url: url, excluding: hosts))
    }

    /// The proxy's URL without its user and password (``Redaction/url(_:)``).
    public var description: String {
        switch choice {
        case .environment: "environment"
        case .none: "none"
        case .proxy(let url, let excluding):
            "proxy \(Redaction.url(url))" + (excluding.isEmpty ? "" : " except \(excluding.joined(separator: ","))")
        }
    }

    /// The variables libcurl reads for an http or https request's proxy (the `no_proxy` pair only
    /// narrows them).
    static let proxyVariables = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]

    /// What each easy handle is told about proxies (``resolved(environment:)``).
    enum Resolved: Equatable {
        /// No proxy for any host: `CURLOPT_NOPROXY` "*" alone. libcurl then neither reads the
        /// environment nor, as with an empty `CURLOPT_PROXY`, copies and frees that empty string
        /// for every transfer.
        case direct
        /// `CURLOPT_PROXY` and `CURLOPT_NOPROXY`, both set ("" included): either one left unset
        /// sends libcurl to the environment.
        case through(url: String, excluding: String)
    }

    /// What to set on every easy handle, or nil to leave the proxy options unset so that libcurl
    /// reads the environment itself.
    ///
    /// An environment that names a proxy is left to libcurl, which picks the variable by the
    /// scheme of each URL it fetches, redirects included; one option per handle could not. An
    /// environment that names none is told to libcurl as "no proxy", which spares it the lookups.
    func resolved(environment: (String) -> String?) -> Resolved? {
        switch choice {
        case .environment:
            Self.proxyVariables.contains { environment($0) != nil } ? nil : .direct
        case .none:
            .direct
        case .proxy(let url, let excluding):
            .through(url: url, excluding: excluding.joined(separator: ","))
        }
    }
}
