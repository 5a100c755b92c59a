import CourierSync
import CCurl
import CCourierExecutor
import Dispatch
import Glibc
import Synchronization

/// The thread that owns libcurl's multi handle and every easy handle, and the Swift executor
/// that runs on it.
///
/// ``ServiceActor``'s serial executor runs on this thread, so actor methods and curl callbacks
/// run on the same thread and curl state needs no lock. The loop itself is a `TaskExecutor`:
/// tasks that prefer it run their non-isolated code on the loop thread too, and then a request
/// costs no thread hop at all (see ``ServiceActor/executor``).
///
/// Each turn the loop runs the queued work (jobs, and transfers that callers on other threads
/// hand over), then curl's due timers, then lets curl act on ready sockets. It sleeps in
/// `epoll_wait` only when nothing is queued, and an enqueue makes a wake-up syscall only when
/// the loop sleeps.
public final class CurlEventLoop: @unchecked Sendable {
    enum Work {
        /// A job of ``ServiceActor``: runs isolated to the actor (``LoopSerialExecutor``).
        case actorJob(UnownedJob)
        /// A job of a task that prefers the loop: runs on it, isolated to nothing, so the task's
        /// non-isolated calls stay on the loop without a hop each (see ``enqueue(_:)``).
        case taskJob(UnownedJob)
        case closure(@Sendable () -> Void)
        /// A transfer built off the loop and how its caller receives the outcome: one entry, no
        /// closure to allocate. The sink travels here rather than being set by the caller, whose
        /// cancellation handler may already have reached the transfer on the loop.
        case transfer(LoopBound<(Transfer, Transfer.Sink)>, cancelled: Bool)
    }

    private struct Inbox {
        var work: [Work] = []
        var sleeping = false
        /// The loop thread has ended: work goes to `retiredQueue`.
        var retired = false
        var waker: LoopWaker?
    }

    private let inbox = LockedValue(Inbox())
    private let loopThread = Atomic<UInt>(0)
    private let retiredQueue = DispatchQueue(label: "courier.loop.retired")
    private static let retiredKey = DispatchSpecificKey<ObjectIdentifier>()
    private let exit = LockedValue<(done: Bool, waiters: [UnsafeContinuation<Void, Never>])>((false, []))

    /// Loop-confined from the moment the thread starts.
    let multi: CurlMulti
    /// The actor's executor: the same thread and inbox, its jobs isolated to the actor.
    let serialExecutor = LoopSerialExecutor()
    // Loop-confined, so the runtime's exclusivity checks (two per resumed batch) guard nothing.
    @exclusivity(unchecked) private var stopRequested = false
    @exclusivity(unchecked) private var callerResumption: CallerResumption
    /// The resumed callers being run, swapped with ``CurlMulti/resumedCallers`` to keep both arrays' storage.
    @exclusivity(unchecked) private var resumedBatch: [UnsafeMutableRawPointer] = []
    private var thread: pthread_t = 0

    init(multi: CurlMulti) throws(TransportError) {
        self.multi = multi
        callerResumption = CallerResumption(enabled: multi.settings.resumesCallersInPlace)
        if callerResumption.enabled { _ = Self.enqueueHookInstalled }
        // Counted once fully initialized: a throw after this point still runs deinit.
        LiveObjects.created(.eventLoop)
        multi.loop = self
        serialExecutor.loop = self
        inbox.withLock { $0.waker = multi.driver.waker }
        retiredQueue.setSpecific(key: Self.retiredKey, value: ObjectIdentifier(self))

        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<CurlEventLoop>.fromOpaque(context!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<CurlEventLoop>.fromOpaque(context).release()
            multi.close()
            throw TransportError(.unknown, message: "cannot start the event loop thread: error \(result)")
        }
    }

    #if DEBUG
    deinit { LiveObjects.destroyed(.eventLoop) }
    #endif

    // MARK: Submitting work

    /// Runs `body` on the loop thread on its next turn.
    func execute(_ body: @escaping @Sendable () -> Void) {
        submit(.closure(body))
    }

    func submitActorJob(_ job: UnownedJob) {
        submit(.actorJob(job))
    }

    /// Hands a transfer built on another thread to the multi handle on the loop's next turn,
    /// with the sink its outcome goes to; `cancelled`: its task was cancelled before it was handed over.
    func submit(_ transfer: Transfer, sink: Transfer.Sink, cancelled: Bool) {
        submit(.transfer(LoopBound((transfer, sink)), cancelled: cancelled))
    }

    private func submit(_ work: Work) {
        let retired = inbox.withLock { inbox -> Bool in
            if inbox.retired { return true }
            inbox.work.append(work)
            if inbox.sleeping {
                inbox.sleeping = false
                // Woken under the lock so the loop cannot retire and close the waker in between.
                inbox.waker?.wake()
            }
            return false
        }
        if retired { retiredQueue.async { self.perform(work) } }
    }

    private func perform(_ work: Work) {
        switch work {
        case .actorJob(let job):
            job.runSynchronously(isolatedTo: serialExecutor.asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        case .taskJob(let job):
            job.runSynchronously(on: asUnownedTaskExecutor())
        case .closure(let body):
            body()
        case .transfer(let transfer, let cancelled):
            multi.submit(transfer.value.0, sink: transfer.value.1, cancelled: cancelled)
        }
    }

    // MARK: The loop

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        courier_set_thread_name("courier-loop")
        multi.capturesCallers = callerResumption.enabled
        // SIGPIPE is thread-directed: a write to a closed socket must not kill the process.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        var batch: [Work] = []
        batch.reserveCapacity(256)
        while !stopRequested {
            // Work that work enqueues (a task resumed on the loop, hopping once more) runs in the
            // same turn, up to a few rounds: each extra turn would cost a non-blocking epoll_wait.
            var rounds = 0
            repeat {
                inbox.withLock { swap(&batch, &$0.work) }
                for work in batch { perform(work) }
                rounds += 1
                if batch.isEmpty { break }
                batch.removeAll(keepingCapacity: true)
            } while rounds < Self.roundsPerTurn && !stopRequested
            if stopRequested { break }
            if multi.driver.runDueTimers() { multi.processCompletions() }
            runResumedCallers()
            // Handle chores (EasyHandlePool) while nothing is queued: after this turn's requests went out.
            if multi.pool.hasChores, inbox.withLock({ $0.work.isEmpty }) { multi.doHandleChores() }

            let mayBlock = inbox.withLock { inbox -> Bool in
                inbox.sleeping = inbox.work.isEmpty
                return inbox.sleeping
            }
            multi.driver.wait(blocking: mayBlock, until: multi.nextTimeout)
            if mayBlock { inbox.withLock { $0.sleeping = false } }
            if multi.driver.dispatch() { multi.processCompletions() }
            multi.expireTimeouts()
            runResumedCallers()
        }
        retire()
    }

    /// Runs the callers this turn's completions resumed: in place or on the pool (``CallerResumption``).
    /// Repeats while a caller run in place resumed others, so none is left behind when the loop sleeps.
    private func runResumedCallers() {
        if let consumer = multi.resumedConsumer {
            multi.resumedConsumer = nil
            let now = MonotonicClock.nanoseconds()
            switch callerResumption.decideConsumer(workQueued: inbox.withLock { !$0.work.isEmpty }, now: now) {
            case .runInPlace:
                multi.callersResumedInPlace += 1
                courier_run_global_job(consumer)
                callerResumption.ran(from: now, to: MonotonicClock.nanoseconds())
            case .handToPool:
                courier_enqueue_global_job(consumer)
            }
        }
        var inPlace = 0
        while !multi.resumedCallers.isEmpty {
            swap(&resumedBatch, &multi.resumedCallers)
            let now = MonotonicClock.nanoseconds()
            // A bounded chain: callers that only resume each other must not keep the loop from its sockets.
            let action = inPlace == Self.inPlaceRunsPerTurn ? .handToPool
                : callerResumption.decide(resumed: resumedBatch.count, othersInFlight: multi.liveTransfers,
                                          workQueued: inbox.withLock { !$0.work.isEmpty }, now: now)
            switch action {
            case .runInPlace:
                inPlace += 1
                multi.callersResumedInPlace += 1
                // What the caller resumes in turn (the parent waiting in a task group for this
                // child, the child that parent adds next) is kept back too, and run here by the
                // next round when nothing else is in flight: a child task per request then costs
                // no pool thread either.
                courier_capture_begin()
                courier_run_global_job(resumedBatch[0])
                if let next = courier_capture_end() { multi.resumedCallers.append(next) }
                callerResumption.ran(from: now, to: MonotonicClock.nanoseconds())
            case .handToPool:
                for job in resumedBatch { courier_enqueue_global_job(job) }
            }
            resumedBatch.removeAll(keepingCapacity: true)
        }
    }

    /// The runtime's global-enqueue hook, installed once per process (it chains to any earlier one).
    private static let enqueueHookInstalled: Void = courier_install_enqueue_hook()

    /// Rounds of queued work per turn before the loop looks at its sockets again.
    static let roundsPerTurn = 4

    /// Callers run in place per turn at most: a child task, the parent it resumes and the child
    /// that parent adds next are three.
    static let inPlaceRunsPerTurn = 4

    /// Ends the loop after the current job. Call on the loop, after every transfer is resolved.
    func stop() {
        precondition(isCurrent, "CurlEventLoop.stop() must run on the loop")
        stopRequested = true
    }

    /// Cleans up curl on its own thread, then hands any later work to a serial queue so an
    /// actor job that arrives after shutdown still runs (and sees the shutdown state).
    private func retire() {
        multi.capturesCallers = false
        for job in multi.resumedCallers { courier_enqueue_global_job(job) }
        multi.resumedCallers = []
        if let consumer = multi.resumedConsumer { courier_enqueue_global_job(consumer) }
        multi.resumedConsumer = nil
        multi.close()
        let leftovers = inbox.withLock { inbox -> [Work] in
            inbox.retired = true
            inbox.waker = nil
            defer { inbox.work = [] }
            return inbox.work
        }
        for work in leftovers { retiredQueue.async { self.perform(work) } }
        let waiters = exit.withLock { state -> [UnsafeContinuation<Void, Never>] in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        pthread_detach(pthread_self())
        for waiter in waiters { waiter.resume() }
        // glibc gives an ended thread's identity to the next thread it creates (it reuses the
        // stack that holds it): kept, a later pool thread would pass for this loop in `isCurrent`.
        loopThread.store(0, ordering: .releasing)
    }

    /// Returns once the loop thread has cleaned up curl and ended.
    func waitUntilStopped() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let done = exit.withLock { state -> Bool in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    /// Stops a loop that nobody shut down (its service was released): cleanup still happens on the loop.
    func stopFromOutside() {
        execute { [self] in
            multi.cancelAll(with: TransportError.shutdown)
            stopRequested = true
        }
    }

    // MARK: Thread identity

    /// Whether the caller runs on this loop (or, after shutdown, on its retired queue).
    var isCurrent: Bool {
        let owner = loopThread.load(ordering: .acquiring)
        if owner != 0 && pthread_equal(pthread_self(), pthread_t(owner)) != 0 { return true }
        return DispatchQueue.getSpecific(key: Self.retiredKey) == ObjectIdentifier(self)
    }
}

extension CurlEventLoop: TaskExecutor {
    /// A job of a task that prefers the loop. It runs on the loop isolated to nothing: run
    /// isolated to the actor's executor (as every job did before), each call from it to a
    /// non-isolated async function was a switch away from the actor, one more job through the
    /// inbox, seven per request on the loop path (Docs/Performance.md, "The plain path").
    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.taskJob(UnownedJob(job)))
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}

/// ``ServiceActor``'s serial executor: the loop thread and its inbox, for actor-isolated jobs.
/// Apart from ``CurlEventLoop``, the task executor, so the runtime can tell a job of the actor
/// from a job of a task that only prefers the loop.
final class LoopSerialExecutor: SerialExecutor, @unchecked Sendable {
    /// Set once in the loop's initializer, before the service that uses it exists.
    unowned(unsafe) var loop: CurlEventLoop!

    func enqueue(_ job: consuming ExecutorJob) {
        loop.submitActorJob(UnownedJob(job))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets `assumeIsolated` work inside curl callbacks, which run on the loop thread.
    func checkIsolated() {
        precondition(loop.isCurrent, "expected to run on Courier's curl event loop thread")
    }

    func isIsolatingCurrentContext() -> Bool? {
        loop.isCurrent
    }
}
