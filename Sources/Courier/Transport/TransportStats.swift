/// What the transport holds at one moment; tests use it to prove nothing leaks.
public struct TransportStats: Sendable, Hashable, CustomStringConvertible {
    /// Requests accepted and not yet resolved, queued or running.
    public var liveTransfers: Int
    /// Requests holding a curl easy handle.
    public var runningTransfers: Int
    /// Easy handles that exist, in use or pooled.
    public var easyHandles: Int
    /// Easy handles idle in the pool.
    public var pooledHandles: Int
    /// Sockets libcurl has open: connections in use and kept alive.
    public var openConnections: Int
    /// Transfers that held a handle and resolved, since the service started.
    public var completedTransfers: Int
    /// Callers the loop ran in place when their response completed, since the service started
    /// (``ServiceActor/Configuration/Transport/resumesCallersInPlace``).
    public var callersResumedInPlace: Int

    /// Requests waiting for admission, holding no handle.
    public var queuedTransfers: Int { liveTransfers - runningTransfers }

    public var description: String {
        "live \(liveTransfers) (running \(runningTransfers)), handles \(easyHandles) (pooled \(pooledHandles)), connections \(openConnections), completed \(completedTransfers), resumed in place \(callersResumedInPlace)"
    }
}
