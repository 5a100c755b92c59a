/// What the transport holds at one moment; tests use it to prove nothing leaks.
public struct TransportStats: Sendable, Hashable, CustomStringConvertible {
    /// Requests accepted and not yet resolved, queued or running.
    public var liveTransfers: Int
    /// Requests holding a curl easy handle.
    public var runningTransfers: Int
    /// Easy handles that exist, in use or pooled.
    public var easyHandles: Int
    /// Easy handles the pool holds and no transfer does: idle, made ahead, or (on libcurl 7.84.0
    /// to 8.0.1, where a handle serves one transfer) served and waiting to be cleaned up.
    public var pooledHandles: Int
    /// Sockets libcurl has open: connections in use and kept alive.
    public var openConnections: Int
    /// Transfers that held a handle and resolved, since the service started.
    public var completedTransfers: Int
    /// Callers the loop ran in place when their response completed, since the service started
    /// (``ServiceActor/Configuration/Transport/resumesCallersInPlace``).
    public var callersResumedInPlace: Int
    /// Transfers given a handle that had served another, since the service started: none where
    /// libcurl makes reuse unsafe (``Libcurl/handlesAreReusable``). For tests.
    var handleReuses = 0

    /// Requests waiting for admission, holding no handle.
    public var queuedTransfers: Int { liveTransfers - runningTransfers }

    public var description: String {
        "live \(liveTransfers) (running \(runningTransfers)), handles \(easyHandles) (pooled \(pooledHandles)), connections \(openConnections), completed \(completedTransfers), resumed in place \(callersResumedInPlace)"
    }
}
