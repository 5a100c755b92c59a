import Logging

/// HTTP protocol versions to offer.
public enum HTTPVersionPreference: Sendable, Hashable {
    /// HTTP/1.1 only.
    case http1_1
    /// HTTP/2 over TLS when the server offers it through ALPN; HTTP/1.1 on plain http. The default.
    case http2
    /// HTTP/2 without negotiation, for plain-text servers known to speak it (h2c).
    case http2PriorKnowledge
}

/// TLS settings. Peer verification is on unless turned off here.
public struct TLSConfiguration: Sendable, Hashable {
    /// Verify the server's certificate chain and host name. Turning this off is for tests only.
    public var verifyPeer: Bool
    /// A PEM file of certificate authorities to trust instead of the system's.
    public var caBundlePath: String?
    /// A PEM client certificate, for mutual TLS.
    public var clientCertificatePath: String?
    /// The PEM private key of the client certificate.
    public var clientKeyPath: String?
    /// The passphrase of ``clientKeyPath``; never logged.
    public var clientKeyPassword: String?

    public init(verifyPeer: Bool = true, caBundlePath: String? = nil, clientCertificatePath: String? = nil,
                clientKeyPath: String? = nil, clientKeyPassword: String? = nil) {
        self.verifyPeer = verifyPeer
        self.caBundlePath = caBundlePath
        self.clientCertificatePath = clientCertificatePath
        self.clientKeyPath = clientKeyPath
        self.clientKeyPassword = clientKeyPassword
    }
}

extension TLSConfiguration: CustomStringConvertible {
    /// The settings with the passphrase replaced by `_snip_` (printing a service's configuration
    /// showed it before: the struct had no description of its own).
    public var description: String {
        var parts = ["verifyPeer: \(verifyPeer)"]
        if let caBundlePath { parts.append("caBundlePath: \(caBundlePath)") }
        if let clientCertificatePath { parts.append("clientCertificatePath: \(clientCertificatePath)") }
        if let clientKeyPath { parts.append("clientKeyPath: \(clientKeyPath)") }
        if clientKeyPassword != nil { parts.append("clientKeyPassword: \(Redaction.placeholder)") }
        return "TLSConfiguration(\(parts.joined(separator: ", ")))"
    }
}

/// The per-transfer options that come from the service configuration, resolved once.
struct TransportSettings: Sendable {
    var timeouts: Timeouts
    var tls: TLSConfiguration
    var httpVersion: HTTPVersionPreference
    var followRedirects: Bool
    var maxRedirects: Int
    var automaticDecompression: Bool
    var userAgent: String
    var maxResponseBodySize: Int
    var logger: Logger
    /// See ``CallerResumption``.
    var resumesCallersInPlace: Bool
    /// The proxy options of every handle; nil: libcurl reads the environment
    /// (see ``ProxyConfiguration/resolved(environment:)``).
    var proxy: ProxyConfiguration.Resolved?
}
