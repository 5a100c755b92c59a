import CourierSync
import Foundation

/// The metadata server of Compute Engine, GKE, Cloud Run and Cloud Functions: the instance's
/// service-account tokens, ID tokens, project ID and account email, over plain HTTP on a
/// link-local address.
///
/// Where it is, as Google's libraries read it: `GCE_METADATA_HOST` (`host[:port]`), else the
/// older `GCE_METADATA_ROOT`, else `169.254.169.254` (`GCE_METADATA_IP` overrides it). Like
/// Go's library, Courier uses the address rather than `metadata.google.internal`: no DNS lookup
/// to wait for.
///
/// Every request carries `Metadata-Flavor: Google`, and an answer counts only if it carries
/// the same header back: anything else listening on that address is not the metadata server.
public struct MetadataServer: Sendable, Hashable {
    /// `http://host[:port]`.
    public let root: URL
    /// Whether the environment named the host (then detection trusts it and only probes it).
    public let configured: Bool
    /// The environment's value when it makes no URL (`GCE_METADATA_HOST=not a host`): nothing is
    /// sent then; detection says so, and every request is an `AuthError` naming it.
    let unusableHost: String?
    /// The universe once learned, shared by this value's copies (an authorizer's): per value,
    /// as Google's libraries keep it per credentials object. Keyed by URL for the whole process,
    /// a server on a port another had used answered with the other's universe.
    private let learnedUniverse = LockedValue<String?>(nil)
    /// Whether a configured host answered, shared by this value's copies (see ``detect(through:)``).
    private let learnedDetection = LockedValue<Detection?>(nil)

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let host = [environment["GCE_METADATA_HOST"], environment["GCE_METADATA_ROOT"]].compactMap { $0 }
            .first { !$0.isEmpty }
        configured = host != nil
        let address = host ?? environment["GCE_METADATA_IP"].flatMap { $0.isEmpty ? nil : $0 } ?? "169.254.169.254"
        // A value from the environment: one that makes no http URL with a host is reported, not a trap.
        if let parsed = URL(string: address.hasPrefix("http") ? address : "http://\(address)"), parsed.host?.isEmpty == false,
           (try? HTTPRequest(url: parsed).validate()) != nil {
            root = parsed
            unusableHost = nil
        } else {
            root = URL(string: "http://169.254.169.254")!
            unusableHost = address
        }
    }

    /// `root` + `/computeMetadata/v1/` + `path`.
    func url(_ path: String, query: [(String, String)] = []) -> URL {
        var text = root.absoluteString + "/computeMetadata/v1/" + path
        if !query.isEmpty {
            text += "?" + query.map { "\($0.0)=\(URITemplate.percentEncode($0.1, keep: URITemplate.isUnreserved))" }
                .joined(separator: "&")
        }
        return URL(string: text) ?? root // the path and query are Courier's own, percent-encoded
    }

    static func request(_ url: URL, timeouts: Timeouts) -> HTTPRequest {
        var request = HTTPRequest(method: .get, url: url)
        request.headers["Metadata-Flavor"] = "Google"
        request.timeouts = timeouts
        return request
    }

    /// GETs `path` and returns the body of a 2xx answer that really came from the metadata
    /// server. 5xx and timeouts are retried by the service's policy.
    func get(_ path: String, query: [(String, String)] = [], name: String, through service: ServiceActor?) async throws(AuthError)
        -> Data
    {
        if let unusableHost {
            throw AuthError(.metadataServer, message: "the metadata server's address \(unusableHost.debugDescription) (GCE_METADATA_HOST, GCE_METADATA_ROOT or GCE_METADATA_IP) is not a host")
        }
        let request = Self.request(url(path, query: query), timeouts: Timeouts(connect: .seconds(5), total: .seconds(30)))
        let response = try await CredentialRequest.send(request, name: name, through: service)
        guard response.headers["Metadata-Flavor"] == "Google" else {
            throw AuthError(.metadataServer, message: "\(root.absoluteString) answered without Metadata-Flavor: Google; it is not the metadata server",
                            status: response.status)
        }
        guard (200..<300).contains(response.status) else {
            throw AuthError(.metadataServer, message: "the metadata server answered \(response.status) to \(path)", status: response.status)
        }
        return response.body
    }

    /// The text at `path`, trimmed.
    func text(_ path: String, name: String, through service: ServiceActor?) async throws(AuthError) -> String {
        String(decoding: try await get(path, name: name, through: service), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The project the instance runs in.
    public func projectID(through service: ServiceActor? = nil) async throws -> String {
        try await text("project/project-id", name: "metadata.project-id", through: service)
    }

    /// The universe the instance runs in (``UniverseDomain``): `universe/universe-domain`,
    /// asked once by this value and its copies. A server that does not know the path (404, as
    /// every one did before universes) or answers empty means `googleapis.com`, as Google's
    /// libraries read it; any other failure is an ``AuthError`` and is asked again next time.
    public func universeDomain(through service: ServiceActor? = nil) async throws -> String {
        if let known = learnedUniverse.withLock({ $0 }) { return known }
        let domain: String
        do {
            let text = try await self.text("universe/universe-domain", name: "metadata.universe-domain", through: service)
            if text.isEmpty {
                domain = UniverseDomain.googleDefault
            } else if let valid = UniverseDomain.validated(text) {
                domain = valid
            } else {
                throw AuthError(.metadataServer, message: "the metadata server's universe domain \(text.debugDescription) is not a domain name")
            }
        } catch let error as AuthError where error.code == .metadataServer && error.status == 404 {
            domain = UniverseDomain.googleDefault
        }
        learnedUniverse.withLock { $0 = domain }
        return domain
    }

    public static func == (lhs: MetadataServer, rhs: MetadataServer) -> Bool {
        lhs.root == rhs.root && lhs.configured == rhs.configured && lhs.unusableHost == rhs.unusableHost
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(root)
        hasher.combine(configured)
        hasher.combine(unusableHost)
    }

    /// The email of one of the instance's service accounts (`default`: the one it runs as).
    public func serviceAccountEmail(_ account: String = "default", through service: ServiceActor? = nil) async throws -> String {
        try await text("instance/service-accounts/\(account)/email", name: "metadata.email", through: service)
    }
}

extension MetadataServer {
    /// Whether the metadata server answers, and what was tried (for the "nothing found" error).
    public struct Detection: Sendable, Hashable {
        public let available: Bool
        public let detail: String
    }

    /// Answers at the default address (or `GCE_METADATA_IP`'s), per root, once found: Google's
    /// libraries also ask once per process.
    private static let detectedByAddress = LockedValue<[URL: Detection]>([:])

    /// Whether this machine has a metadata server, decided quickly and then remembered: for the
    /// process at the default address (the machine's one link-local server; a laptop pays its
    /// failed probes once), and by this value and its copies at a configured host (the caller's
    /// choice, which may be a server started later on the same address: the suite's fakes are).
    ///
    /// Google's Python library pings up to 3 × 3 s before it gives up, and Go's waits for a DNS
    /// lookup. Courier asks less of a machine that is not on Google Cloud and more of one that is:
    /// - a configured host (`GCE_METADATA_HOST`) or a machine whose DMI product name says
    ///   Google (Compute Engine, GKE nodes) is probed patiently: 4 tries of 1, 2, 3 and 4 s,
    ///   because a new VM's metadata server can be slow for its first seconds;
    /// - anywhere else (Cloud Run has no such DMI; a laptop has no metadata server) 2 quick tries
    ///   of 0.5 s to connect and 1 s in all: Cloud Run's server answers in milliseconds, and a
    ///   laptop's unroutable link-local address fails in at most ~2 s.
    public func detect(through service: ServiceActor? = nil) async -> Detection {
        if let unusableHost {
            return Detection(available: false, detail: "the metadata server's address \(unusableHost.debugDescription) is not a host")
        }
        if let known = configured ? learnedDetection.withLock({ $0 }) : Self.detectedByAddress.withLock({ $0[root] }) {
            return known
        }
        let patient = configured || Self.dmiSaysGoogle()
        let timeouts: [Timeouts] = patient
            ? [1, 2, 3, 4].map { Timeouts(connect: .seconds($0), total: .seconds($0)) }
            : [Timeouts(connect: .milliseconds(500), total: .seconds(1)), Timeouts(connect: .milliseconds(500), total: .seconds(1))]
        let retry = RetryPolicy(maxRetries: timeouts.count - 1, initialDelay: 0...0.05, deadline: nil)
        let probe = URL(string: root.absoluteString + "/") ?? root
        let detection: Detection
        do {
            let response = try await CredentialRequest.send(name: "metadata.detect", through: service, retry: retry) { attempt in
                Self.request(probe, timeouts: timeouts[min(attempt, timeouts.count - 1)])
            }
            detection = response.headers["Metadata-Flavor"] == "Google"
                ? Detection(available: true, detail: "the metadata server at \(root.absoluteString) answered")
                : Detection(available: false, detail: "\(root.absoluteString) answered without Metadata-Flavor: Google")
        } catch {
            if error.code == .cancelled { return Detection(available: false, detail: "detection was cancelled") }
            detection = Detection(available: false,
                                  detail: "the metadata server at \(root.absoluteString) did not answer (\(timeouts.count) tries)")
        }
        if configured {
            learnedDetection.withLock { $0 = detection }
        } else {
            Self.detectedByAddress.withLock { $0[root] = detection }
        }
        return detection
    }

    /// Compute Engine VMs (and so GKE nodes) say who made them in the DMI product name.
    static func dmiSaysGoogle(path: String = "/sys/class/dmi/id/product_name") -> Bool {
        guard let name = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return name.contains("Google")
    }
}
