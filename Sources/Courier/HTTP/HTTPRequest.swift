import Foundation

/// A raw HTTP request: method, URL, headers, body and per-request timeouts.
///
/// ```swift
/// var request = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1:8080/echo")!)
/// request.headers["Content-Type"] = "application/json"
/// request.body = .data(Data(#"{"hello":"world"}"#.utf8))
/// let response = try await service.send(request)
/// ```
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod {
        get { storage.method }
        _modify { yield &unique.method }
    }

    public var url: URL {
        get { storage.url }
        _modify { yield &unique.url }
    }

    public var headers: HTTPHeaders {
        get { storage.headers }
        _modify { yield &unique.headers }
    }

    public var body: Body {
        get { storage.body }
        _modify { yield &unique.body }
    }

    /// Per-request timeouts; a `nil` field inherits the service's ``ServiceActor/Configuration/Transport-swift.struct/timeouts``.
    public var timeouts: Timeouts {
        get { storage.timeouts }
        _modify { yield &unique.timeouts }
    }

    /// Called on the event loop as body bytes move (at most every 64 KiB, and at the end): keep it
    /// cheap — store the numbers, do not do work.
    public var progress: (@Sendable (TransferProgress) -> Void)? {
        get { storage.progress }
        _modify { yield &unique.progress }
    }

    /// Whether the request may be re-sent after it may have reached the server: by its method
    /// and preconditions (``Idempotency/automatic``), or as the caller declares. It also governs
    /// libcurl's own re-send on a kept-alive connection that died (Docs/Pipeline.md).
    public var idempotency: Idempotency {
        get { storage.idempotency }
        _modify { yield &unique.idempotency }
    }

    /// Whether the body arrives as the server encoded it: `Accept-Encoding: gzip` is offered (unless
    /// the request names its own) and nothing is decoded, whatever the service's automatic
    /// decompression. A download keeps a gzip-stored object's bytes so, since its checksums, its
    /// ranges and its resumption all count stored bytes; it decodes the whole at the end.
    var keepsContentEncoding: Bool {
        get { storage.keepsContentEncoding }
        _modify { yield &unique.keepsContentEncoding }
    }

    /// A CA bundle this request's server is verified against instead of the service's: a
    /// credentials file that names its token server's CA (GDCH's `ca_cert_path`).
    var trustedCAPath: String? {
        get { storage.trustedCAPath }
        _modify { yield &unique.trustedCAPath }
    }

    /// The fields, shared by copies until one of them changes (copy on write). A request is
    /// copied at every step of the pipeline and kept in the frames of a request in flight; as
    /// one reference it costs each of them 8 bytes and one retain instead of 169 bytes and six
    /// (the in-flight probe and callgrind, Docs/Performance.md).
    private var storage: Storage

    // Its fields skip the runtime's exclusivity check (P11, Docs/Performance.md): a shared box is
    // never written, and a unique one only through this value's own, statically checked, access.
    private final class Storage: @unchecked Sendable { // mutated only through `unique`, when not shared
        @exclusivity(unchecked) var method: HTTPMethod
        @exclusivity(unchecked) var url: URL
        @exclusivity(unchecked) var headers: HTTPHeaders
        @exclusivity(unchecked) var body: Body
        @exclusivity(unchecked) var timeouts: Timeouts
        @exclusivity(unchecked) var progress: (@Sendable (TransferProgress) -> Void)?
        @exclusivity(unchecked) var idempotency: Idempotency = .automatic
        @exclusivity(unchecked) var keepsContentEncoding = false
        @exclusivity(unchecked) var trustedCAPath: String?

        init(method: HTTPMethod, url: URL, headers: HTTPHeaders, body: Body, timeouts: Timeouts) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.timeouts = timeouts
        }

        func copy() -> Storage {
            let copy = Storage(method: method, url: url, headers: headers, body: body, timeouts: timeouts)
            copy.progress = progress
            copy.idempotency = idempotency
            copy.keepsContentEncoding = keepsContentEncoding
            copy.trustedCAPath = trustedCAPath
            return copy
        }
    }

    /// Which storage this value uses; two values share it until one changes (for tests).
    var storageIdentity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// The storage, copied first when another request shares it.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    public init(
        method: HTTPMethod = .get,
        url: URL,
        headers: HTTPHeaders = [:],
        body: Body = .empty,
        timeouts: Timeouts = Timeouts()
    ) {
        storage = Storage(method: method, url: url, headers: headers, body: body, timeouts: timeouts)
    }

    /// Checks everything that can be checked before a byte is sent: the method is a token, the
    /// URL is absolute http(s), and no header carries CR, LF or NUL. ``ServiceActor/send(_:options:)``
    /// calls it; call it yourself to reject bad input early (a load test's scenario file).
    public func validate() throws(TransportError) {
        _ = try validatedTarget()
    }
}

extension HTTPRequest: CustomStringConvertible {
    /// The method and URL, with credentials in the query replaced by `_snip_`.
    public var description: String { "\(method) \(Redaction.url(url.absoluteString))" }
}

/// Per-request time limits. `nil` means "inherit the service's value"; ``ServiceActor/Configuration/Transport-swift.struct/timeouts``
/// uses `nil` for "no limit".
public struct Timeouts: Sendable, Hashable {
    /// Limit on making a new connection: name lookup, TCP and TLS. Waiting for a connection
    /// another request holds does not count, and a kept-alive connection needs none.
    public var connect: Duration?
    /// Deadline for the whole exchange, from when the request gets its curl handle (after any
    /// wait in the service's queue) to the last body byte, redirects included.
    public var total: Duration?
    /// The longest time without receiving or sending a byte, from when the request starts a
    /// connection or goes out on one (waiting for a busy connection is not idleness). Checked
    /// four times per period, so it fires up to a quarter of it late.
    public var idle: Duration?

    public init(connect: Duration? = nil, total: Duration? = nil, idle: Duration? = nil) {
        self.connect = connect
        self.total = total
        self.idle = idle
    }

    /// Fields set here win; others come from `defaults`.
    func merged(over defaults: Timeouts) -> Timeouts {
        Timeouts(connect: connect ?? defaults.connect, total: total ?? defaults.total, idle: idle ?? defaults.idle)
    }
}

extension Duration {
    /// Whole milliseconds, saturating: a duration too long for them (a timeout of `.seconds(.max)`
    /// read from a file) is the longest there is, not a trap.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return sumOverflow ? (seconds < 0 ? .min : .max) : sum
    }
}

/// How far a transfer's bodies have moved.
public struct TransferProgress: Sendable, Hashable {
    /// Request body bytes handed to the connection.
    public var bytesSent: Int64
    /// Response body bytes received.
    public var bytesReceived: Int64
    /// The response's Content-Length, once known.
    public var expectedBytes: Int64?

    public init(bytesSent: Int64 = 0, bytesReceived: Int64 = 0, expectedBytes: Int64? = nil) {
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.expectedBytes = expectedBytes
    }
}
