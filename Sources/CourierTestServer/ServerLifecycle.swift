import Synchronization

/// Lets long-running handlers (delays, drips, stalls) end promptly when the server stops, so a
/// test that asked for a 20-second delay does not hold up the server's shutdown.
final class ServerLifecycle: Sendable {
    private let stopping = Atomic<Bool>(false)

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func beginStopping() {
        stopping.store(true, ordering: .releasing)
    }

    /// Sleeps `duration`, in steps of at most 50 ms; throws `CancellationError` once the server stops.
    func pause(_ duration: Duration) async throws {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if isStopping { throw CancellationError() }
            try await Task.sleep(for: min(.milliseconds(50), deadline - ContinuousClock.now))
        }
    }
}
