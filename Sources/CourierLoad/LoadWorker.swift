import Courier

/// One request in flight at a time: take a slot, send, record, repeat until the schedule ends.
struct LoadWorker: Sendable {
    let plan: LoadPlan
    let service: ServiceActor
    let authorizer: (any Authorizer)?
    let schedule: LoadSchedule
    let recorder: LoadRecorder
    let seed: UInt64

    func run() async {
        var generator = SplitMix64(seed: seed &+ schedule.start)
        while let slot = schedule.next(), !Task.isCancelled {
            let index = plan.pick(&generator)
            let entry = plan.entries[index]
            let started: UInt64
            if let intended = slot.intendedStart {
                let now = monotonicNanoseconds()
                if intended > now {
                    do { try await Task.sleep(nanoseconds: intended - now) } catch { return }
                }
                started = intended // late starts count against the server, as wrk2 counts them
            } else {
                started = monotonicNanoseconds()
            }
            var request = entry.request
            do {
                if let authorizer { try await authorizer.authorize(&request) }
                let response = try await service.send(request)
                recorder.recordResponse(endpoint: index, status: response.status, microseconds: elapsed(since: started),
                                        received: response.body.count, sent: entry.bodySize)
            } catch is CancellationError {
                return // the run was cancelled: what was in flight is not a result
            } catch {
                recorder.recordFailure(endpoint: index, kind: Self.kind(of: error),
                                       microseconds: elapsed(since: started), sent: 0)
            }
        }
    }

    private func elapsed(since start: UInt64) -> UInt64 {
        let now = monotonicNanoseconds()
        return now > start ? (now - start) / 1000 : 0
    }

    static func kind(of error: any Error) -> String {
        if let error = error as? TransportError { return error.kind }
        if error is AuthError { return "authorization" }
        return String(describing: type(of: error))
    }
}

/// A tiny, fast generator with a fixed seed per worker, so scenario mixes are reproducible.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
