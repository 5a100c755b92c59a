/// Connection and concurrency limits for a service.
public struct ConnectionLimits: Sendable, Hashable {
    /// Connections to one host; GTMSessionFetcherService's default is 10.
    public var maxConnectionsPerHost: Int
    /// Connections overall; 0 means no limit.
    public var maxConnectionsTotal: Int
    /// Transfers holding a curl handle at once for one host; the rest wait in a FIFO queue
    /// without one. Above the connection limit so HTTP/2 can multiplex.
    public var maxConcurrentTransfersPerHost: Int
    /// Transfers holding a curl handle at once overall.
    public var maxConcurrentTransfers: Int
    /// HTTP/2 streams Courier opens on one connection, at most; the server's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` lowers it (Google's front ends say 100, nginx 128).
    /// libcurl's own default is 100, which on a 25 ms link capped one connection at 100 / RTT
    /// requests per second however many were in flight (Docs/Performance.md, at 25 ms RTT).
    public var maxConcurrentStreamsPerConnection: Int

    public init(maxConnectionsPerHost: Int = 10, maxConnectionsTotal: Int = 0,
                maxConcurrentTransfersPerHost: Int = 100, maxConcurrentTransfers: Int = 1024,
                maxConcurrentStreamsPerConnection: Int = 1000) {
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxConnectionsTotal = maxConnectionsTotal
        self.maxConcurrentTransfersPerHost = maxConcurrentTransfersPerHost
        self.maxConcurrentTransfers = maxConcurrentTransfers
        self.maxConcurrentStreamsPerConnection = maxConcurrentStreamsPerConnection
    }
}
