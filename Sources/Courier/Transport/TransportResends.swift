import Synchronization

/// Where a transfer counts libcurl's silent re-sends of its request: after a kept-alive
/// connection closed before any response, curl sends an idempotent request again on a fresh
/// connection by itself (Docs/Pipeline.md, "libcurl's own re-send"). The transport only counts;
/// the operation above it tells them as retries. The pipeline's ``AttemptTally`` is one, so a
/// transfer holds one reference and the operation takes no allocation for it.
///
/// Not final, for that subclass; unchecked only because the compiler asks a non-final class to
/// say so: its state is one atomic.
class TransportResends: @unchecked Sendable {
    private let resends = Atomic<Int>(0)

    /// Counted on the loop, as curl starts a re-send.
    func countResend() { resends.add(1, ordering: .relaxed) }

    /// The re-sends counted since the last call: a load on the common path, an exchange only
    /// when there were some.
    func takeResends() -> Int {
        resends.load(ordering: .relaxed) == 0 ? 0 : resends.exchange(0, ordering: .relaxed)
    }
}
