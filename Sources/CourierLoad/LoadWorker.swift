import Courier

/// One request in flight at a time: take a slot, send, record, repeat until the schedule ends.
///
/// Its methods are `nonisolated(nonsending)`: a plain `async` method hops to the generic executor
/// at its start and after each await, and on a task that prefers the loop every hop asks the
/// runtime for the preference under the task's status lock (six per request, about 1,000
/// instructions: Docs/Performance.md, "Decisions").
struct LoadWorker: Sendable {
    let plan: LoadPlan
    let service: ServiceActor
    let authorizer: (any Authorizer)?
    let schedule: LoadSchedule
    let recorder: LoadRecorder
    /// In a ramp of requests in flight, which worker this is: it runs only while the ramp allows
    /// more than `number` requests in flight.
    var ramp: Ramp?

    struct Ramp: Sendable {
        let profile: StageProfile
        let number: Int
    }

    nonisolated(nonsending) func run() async {
        while await mayRun(), let slot = schedule.next(), !Task.isCancelled {
            switch plan.items[plan.pick(number: slot.number)] {
            case .request(let index):
                var values: [String: String] = [:] // empty: a request alone extracts nothing
                if await send(index, number: slot.number, intendedStart: slot.intendedStart, values: &values) == .stop { return }
            case .flow(let steps):
                guard await runFlow(steps, slot: slot) else { return }
            }
        }
    }

    /// One run of a flow: its steps in order, each given what the earlier ones extracted; false
    /// when the worker must stop (cancelled, or the data ran out).
    private nonisolated(nonsending) func runFlow(_ steps: [Int], slot: LoadSchedule.Slot) async -> Bool {
        var values: [String: String] = [:]
        for (position, index) in steps.enumerated() {
            // Only the first step has a due time; the rest follow as the user goes.
            if await send(index, number: slot.number, intendedStart: position == 0 ? slot.intendedStart : nil, values: &values) == .stop {
                return false
            }
            if position + 1 < steps.count, plan.entries[index].extract.contains(where: { values[$0.name] == nil }) {
                // The later steps need a value this one did not give: not sent, and counted as skipped.
                let next = steps[position + 1]
                recorder.recordSkipped(endpoints: steps[(position + 1)...], checks: plan.entries[next].checksFailed)
                return true
            }
            let think = plan.entries[index].thinkNanoseconds // read in place, as in send
            if think > 0 {
                do { try await Task.sleep(nanoseconds: think) } catch { return false }
            }
        }
        return true
    }

    enum Sent {
        /// Answered, with any status; recorded, and its extractions made.
        case answered
        /// Failed below HTTP, or could not be built; recorded.
        case failed
        /// Cancelled, or the data ran out: the worker ends.
        case stop
    }

    /// Builds, sends and records one request of entry `index`; a flow's step also takes its
    /// values from the response into `values` (the response itself is not kept).
    private nonisolated(nonsending) func send(_ index: Int, number: Int, intendedStart: UInt64?, values: inout [String: String]) async -> Sent {
        // Fields read from the plan in place: a copy of the whole entry took a retain and a
        // release for each of its references on every request.
        let request: HTTPRequest
        do {
            guard let filled = try plan.request(index, number: number, values: values) else { return .stop } // the data ran out
            request = filled
        } catch {
            recorder.recordFailure(endpoint: index, kind: "invalidRequest", microseconds: 0, sent: 0, now: monotonicNanoseconds(),
                                   checks: plan.entries[index].checksFailed)
            return .failed
        }
        let started: UInt64
        if let intended = intendedStart {
            let now = monotonicNanoseconds()
            if intended > now {
                do { try await Task.sleep(nanoseconds: intended - now) } catch { return .stop }
            }
            started = intended // late starts count against the server, as wrk2 counts them
        } else {
            started = monotonicNanoseconds()
        }
        var authorized = request
        let live = recorder.metrics
        live?.inFlight.increment()
        defer { live?.inFlight.decrement() }
        do {
            if let authorizer { try await authorizer.authorize(&authorized) }
            let response = try await service.send(authorized)
            let now = monotonicNanoseconds()
            let checkIndices = plan.entries[index].checks
            let checks = checkIndices.isEmpty ? LoadRecorder.CheckOutcomes() : check(checkIndices, response)
            let sent = plan.entries[index].template?.body == nil ? plan.entries[index].bodySize : Int(request.body.knownLength ?? 0)
            recorder.recordResponse(endpoint: index, status: response.status, microseconds: elapsed(since: started, now: now),
                                    received: response.body.count, sent: sent, now: now, checks: checks)
            for (name, extractor) in plan.entries[index].extract {
                values[name] = extractor.value(headers: response.headers, body: response.body)
            }
            return .answered
        } catch is CancellationError {
            return .stop // the run was cancelled: what was in flight is not a result
        } catch {
            let now = monotonicNanoseconds()
            recorder.recordFailure(endpoint: index, kind: Self.kind(of: error),
                                   microseconds: elapsed(since: started, now: now), sent: 0, now: now, checks: plan.entries[index].checksFailed)
            return .failed
        }
    }

    /// The request's checks (indices into the plan's) on `response`.
    private func check(_ checks: [Int], _ response: HTTPResponse) -> LoadRecorder.CheckOutcomes {
        var outcomes = LoadRecorder.CheckOutcomes()
        for index in checks {
            outcomes.evaluated |= 1 << UInt64(index)
            if plan.checks[index].passes(status: response.status, headers: response.headers, body: response.body) {
                outcomes.passed |= 1 << UInt64(index)
            }
        }
        return outcomes
    }

    /// Waits until the ramp lets this worker send; false when it never will again.
    private nonisolated(nonsending) func mayRun() async -> Bool {
        guard let ramp else { return true }
        let seconds = Double(monotonicNanoseconds() &- schedule.start) / 1e9
        guard let time = ramp.profile.firstTime(above: Double(ramp.number), atOrAfter: seconds),
              time < ramp.profile.totalSeconds else { return false }
        if time > seconds {
            do { try await Task.sleep(nanoseconds: UInt64(saturating: (time - seconds) * 1e9)) } catch { return false }
        }
        return true
    }

    private func elapsed(since start: UInt64, now: UInt64) -> UInt64 {
        now > start ? (now - start) / 1000 : 0
    }

    static func kind(of error: any Error) -> String {
        if let error = error as? TransportError { return error.kind }
        if error is AuthError { return "authorization" }
        return String(describing: type(of: error))
    }
}
