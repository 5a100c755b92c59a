import Synchronization

/// What an operation's attempts saw, shared by every copy of its context: the last HTTP status,
/// for its `finished` event and its span, and how many times it was retried (libcurl's own
/// re-sends included), for its span
/// (`courier.retries`, `http.request.resend_count`). Atomics, because a task-group batch's
/// items and a sliced download's slices record into one tally from several tasks.
///
/// It is also where the operation's transfers count libcurl's own re-sends
/// (``TransportResends``), which the pipeline takes and tells as retries.
///
/// Not final: an operation's first context storage is a tally itself (``RequestContext``), so the
/// two take one allocation; its changed copies point at that one. Unchecked only because the
/// compiler asks a non-final class to say so: its state is atomics alone.
class AttemptTally: TransportResends, @unchecked Sendable {
    private let status = Atomic<Int>(0)
    private let retryCount = Atomic<Int>(0)

    /// Records the status of an answer (0: the attempt got none).
    func record(status: Int) { self.status.store(status, ordering: .relaxed) }

    /// The last status recorded; nil before any answer.
    var lastStatus: Int? {
        let status = status.load(ordering: .relaxed)
        return status == 0 ? nil : status
    }

    func countRetry() { retryCount.add(1, ordering: .relaxed) }
    var retries: Int { retryCount.load(ordering: .relaxed) }
}
