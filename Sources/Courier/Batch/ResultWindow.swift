import CourierSync
import Synchronization

/// Runs `count` jobs with at most `width` in flight and hands their results to one consumer in
/// bulk: the engine under ``ServiceActor/sendAll(_:maxInFlight:failFast:requestID:)`` and
/// ``ServiceActor/batch(_:)``.
///
/// No task per job: `width` long-lived workers each claim the next index when their last job
/// ends, so a completed transfer's worker starts the next transfer itself (on the loop thread,
/// when the workers prefer it), without creating a task or waking a parent. Results go to a
/// ``ResultInbox``; whatever completed while the consumer was busy reaches it in one hand-off.
///
/// One job at a time with no request ID is the consumer's own work: ``take(_:)`` runs the next job
/// in the consumer's task, with no worker, no inbox and no second task to resume per result.
///
/// Every index gets exactly one result: those never started (cancellation, `failFast`) get
/// `CancellationError`, after the ones that ran.
final class ResultWindow<Output: Sendable>: Sendable {
    typealias Element = (index: Int, result: Result<Output, any Error>)

    private let driver = LockedValue<Task<Void, Never>?>(nil)
    /// Where the consumer's results come from: the workers' inbox, or its own task.
    private let source: Source

    private enum Source: Sendable {
        case workers(ResultInbox<Element>)
        case inline(Inline)
    }

    /// Starts the workers. `job.run(index)` runs one job; `job.skipped(index)` gives the result of
    /// one never started. With `id`, the run is registered in `registry` so that
    /// ``ServiceActor/cancel(requestID:)`` reaches it.
    init<Job: WindowJob>(count: Int, width: Int, failFast: Bool, loop: CurlEventLoop?, registeredAs id: String?,
                         in registry: RequestRegistry, job: Job) where Job.Output == Output {
        let cursor = Cursor(count: count)
        let workers = min(max(1, width), count)
        // One at a time, a worker would only hand each result to the consumer, who waits for it
        // anyway: the consumer's task runs the job instead. With an ID, cancel(requestID:) needs
        // a task to reach between the consumer's calls, so that run keeps its worker.
        guard width > 1 || id != nil else {
            source = .inline(Inline(cursor: cursor, failFast: failFast, job: { await job.run($0) }, skipped: { await job.skipped($0) }))
            return
        }
        let inbox = ResultInbox<Element>(loop: loop)
        source = .workers(inbox)
        @Sendable func run() async {
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<workers {
                    group.addTask { await Self.work(cursor: cursor, inbox: inbox, failFast: failFast, job: job) }
                }
                while let failed = await group.next() {
                    if failed { group.cancelAll() }
                }
            }
        }
        let task = Task(executorPreference: loop) {
            if let id { _ = try? await registry.run(id) { await run() } } else { await run() }
            while let index = cursor.claim(ignoringClosed: true) { inbox.deliver((index, await job.skipped(index))) }
            inbox.finish()
        }
        driver.withLock { $0 = task }
    }

    /// One worker: claims and runs jobs until none is left; true if it stopped on a failure
    /// (`failFast`). Its frames sit under every job it runs, in each worker task's allocator, so
    /// they are kept few and small: the job is a specialised call, not a closure's two frames, and
    /// what happens between jobs is in `handOff`, out of line. (Through a closure and with the
    /// hand-off inline, 100,000 workers took a third 1 KiB slab each: 4.0 KiB a query, against
    /// 2.9 KiB for a task group's children.)
    private static func work<Job: WindowJob>(cursor: Cursor, inbox: ResultInbox<Element>, failFast: Bool,
                                             job: Job) async -> Bool where Job.Output == Output {
        while !Task.isCancelled, let index = cursor.claim() {
            if handOff(index, await job.run(index), cursor: cursor, inbox: inbox, failFast: failFast) { return true }
        }
        return false
    }

    /// Delivers one result; with `failFast`, a failure closes the window (before a sibling
    /// claims another) and returns true.
    @inline(never)
    private static func handOff(_ index: Int, _ result: consuming Result<Output, any Error>, cursor: Cursor,
                                inbox: ResultInbox<Element>, failFast: Bool) -> Bool {
        let failed = failFast && isFailure(copy result) // a copy only with failFast
        inbox.deliver((index, result)) // moved, not copied: see `deliver`
        guard failed else { return false }
        cursor.close()
        return true
    }

    private static func isFailure(_ result: Result<Output, any Error>) -> Bool {
        switch result {
        case .success: false
        case .failure: true
        }
    }

    /// Cancels the jobs still running; the rest get `CancellationError`.
    func cancel() {
        driver.withLock { $0?.cancel() }
    }

    /// Every result as it arrives, taken in bulk; returns when all have come. Cancelling the
    /// calling task cancels the jobs (each still gets its result).
    nonisolated(nonsending) func forEach(_ body: (Element) throws -> Void) async rethrows {
        var taken: [Element] = []
        while true {
            taken = await take(taken)
            if taken.isEmpty { return }
            // Moved out last first rather than copied: the array is then empty when its storage
            // goes back, with nothing for the runtime's generic destroy to walk.
            taken.reverseByMoving()
            while let element = taken.popLast() { try body(element) }
        }
    }

    /// The results that arrived since the last call, waiting for at least one; empty once all
    /// have come. `spent` is the consumer's last array, whose storage holds the next results.
    nonisolated(nonsending) func take(_ spent: consuming [Element]) async -> [Element] {
        switch source {
        case .inline(let inline): return await inline.next(spent)
        case .workers(let inbox): return await inbox.take(spent) { self.cancel() }
        }
    }

    deinit {
        // The consumer let go (iteration ended early or its iterator was dropped): nobody reads on.
        driver.withLock { $0?.cancel() }
    }

    /// The jobs run one at a time by the consumer: the next is claimed when it asks. Cancelling
    /// the consumer's task cancels the job in flight (it is the consumer's own work) and skips the rest.
    private struct Inline: Sendable {
        let cursor: Cursor
        let failFast: Bool
        let job: @Sendable (Int) async -> Result<Output, any Error>
        let skipped: @Sendable (Int) async -> Result<Output, any Error>

        nonisolated(nonsending) func next(_ spent: consuming [Element]) async -> [Element] {
            var taken = spent
            taken.removeAll(keepingCapacity: true)
            if !Task.isCancelled, let index = cursor.claim() {
                let result = await job(index)
                if failFast, case .failure = result { cursor.close() }
                taken.append((index, result))
            } else if let index = cursor.claim(ignoringClosed: true) {
                taken.append((index, await skipped(index)))
            }
            return taken
        }
    }

    /// The next index to run; nil when all are claimed or the window closed (`failFast`).
    private final class Cursor: Sendable {
        let count: Int
        let next = Atomic<Int>(0)
        let closed = Atomic<Bool>(false)
        init(count: Int) { self.count = count }

        func claim(ignoringClosed: Bool = false) -> Int? {
            guard ignoringClosed || !closed.load(ordering: .relaxed) else { return nil }
            let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
            return index < count ? index : nil
        }

        func close() { closed.store(true, ordering: .relaxed) }
    }
}

/// Results handed from many producers to one consumer, in bulk: the consumer takes everything
/// that arrived since it last looked in one lock and at most one wake-up. The two arrays trade
/// places, so after the first few results neither allocates.
final class ResultInbox<Element: Sendable>: Sendable {
    fileprivate struct State {
        var ready: [Element] = []
        /// The consumer's emptied array, left while it waits: `ready`'s next storage.
        var spare: [Element] = []
        var waiter: UnsafeContinuation<[Element], Never>?
        var finished = false
    }

    private let state = LockedValue(State())
    /// The loop the workers run on, if they do: the consumer they resume may run there in place.
    private let loop: CurlEventLoop?

    init(loop: CurlEventLoop?) { self.loop = loop }

    /// Takes `element` by move into the array, so no copy (and no destroy of the original) of a
    /// result: for a tuple holding a `Result`, each went through the runtime's value witnesses.
    /// It crosses into the closure in an optional that the closure empties (`take()`): passed
    /// as a `consuming` argument of a generic closure, it was still copied there and the
    /// original destroyed (callgrind: about 400 instructions a result).
    func deliver(_ element: consuming Element) {
        var pending = Optional(element)
        let wake: (UnsafeContinuation<[Element], Never>, [Element])? = state.withLock { state in
            state.ready.append(pending.take()!)
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.takeReady())
        }
        guard let (waiter, elements) = wake else { return }
        if let loop, loop.isCurrent {
            loop.multi.resumeConsumer { waiter.resume(returning: elements) }
        } else {
            waiter.resume(returning: elements)
        }
    }

    func finish() {
        let wake: (UnsafeContinuation<[Element], Never>, [Element])? = state.withLock { state in
            state.finished = true
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.takeReady())
        }
        if let (waiter, elements) = wake { waiter.resume(returning: elements) }
    }

    /// Everything delivered and not yet taken, waiting for at least one; empty once finished.
    /// `spent` is the consumer's last array: its storage holds the next results. `onCancel`
    /// runs if the waiting task is cancelled.
    nonisolated(nonsending) func take(_ spent: consuming [Element], onCancel: @Sendable () -> Void) async -> [Element] {
        var spent = spent
        spent.removeAll(keepingCapacity: true)
        let ready: [Element]? = state.withLock { state in
            if state.ready.isEmpty && !state.finished {
                swap(&state.spare, &spent)
                return nil
            }
            swap(&state.ready, &spent)
            return spent
        }
        if let ready { return ready }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let now: [Element]? = state.withLock { state in
                    guard state.ready.isEmpty && !state.finished else { return state.takeReady() }
                    state.waiter = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            onCancel()
        }
    }
}

extension ResultInbox.State {
    /// The results so far, moved out; the spare array's storage takes their place.
    mutating func takeReady() -> [Element] {
        var taken: [Element] = []
        swap(&taken, &spare)
        swap(&taken, &ready)
        return taken
    }
}
