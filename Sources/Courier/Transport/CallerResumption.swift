/// Whether the loop runs a resumed caller in place, on its own thread, or hands it to the pool.
///
/// When a response completes for a task without an executor preference, resuming it enqueues
/// the task on the global pool: a pool thread is woken (or was parked) and the loop goes back to
/// sleep, two threads and at least two context switches for one request. When that caller is the
/// only one resumed and nothing else is in flight, nobody waits for the loop, so the loop runs
/// the caller until it next suspends (typically in its next request): one thread, one switch per
/// request, as C. With more in flight the loop is busy and the pool takes the callers, as
/// before. (Docs/Performance.md, "P8".)
///
/// A caller that then computes for long holds the loop meanwhile: after two runs in a row longer
/// than ``longRun``, running in place pauses for ``pauseFactor`` times the shorter of the two, so
/// callers that do heavy work after their responses hold the loop about 2 % of the time at most.
/// One long run alone does not pause it: the runs are timed by the wall clock (a thread CPU clock
/// costs a system call per run), so a loop thread preempted for a few milliseconds looks like a
/// long run, and pausing for that sent a quarter of an idle 1-in-flight benchmark's requests
/// through the pool (`make bench-check`'s switch outliers). Two preemptions in a row are rare; a
/// caller that computes for long does so after every response.
struct CallerResumption {
    /// Off: every resumed caller goes to the pool (``ServiceActor/Configuration/Transport/resumesCallersInPlace``).
    let enabled: Bool
    private var pausedUntil: UInt64 = 0
    /// How long the last run in place took, when it was long; 0 after a short one.
    private var lastLongRun: UInt64 = 0

    static let longRun: UInt64 = 1_000_000 // 1 ms
    static let pauseFactor: UInt64 = 100

    init(enabled: Bool) {
        self.enabled = enabled
    }

    enum Action: Equatable {
        /// Run the one resumed caller on the loop thread, now.
        case runInPlace
        /// Enqueue every resumed caller on the global pool.
        case handToPool
    }

    /// What to do with the callers resumed this turn.
    func decide(resumed: Int, othersInFlight: Int, workQueued: Bool, now: UInt64) -> Action {
        enabled && resumed == 1 && othersInFlight == 0 && !workQueued && now >= pausedUntil ? .runInPlace : .handToPool
    }

    /// What to do with a many-queries consumer (``ResultInbox``) resumed this turn: in place
    /// unless other work waits for the loop. Transfers in flight do not keep it off the loop:
    /// the window keeps its own in flight, and the consumer takes every result that arrived in
    /// one run. The long-run pause bounds a consumer that computes as it bounds a caller.
    func decideConsumer(workQueued: Bool, now: UInt64) -> Action {
        enabled && !workQueued && now >= pausedUntil ? .runInPlace : .handToPool
    }

    /// A caller ran in place from `start` to `end`.
    mutating func ran(from start: UInt64, to end: UInt64) {
        let elapsed = end &- start
        guard elapsed > Self.longRun else {
            lastLongRun = 0
            return
        }
        guard lastLongRun > 0 else {
            lastLongRun = elapsed
            return
        }
        pausedUntil = end &+ min(elapsed, lastLongRun).multipliedReportingOverflow(by: Self.pauseFactor).partialValue
        lastLongRun = 0
    }
}
