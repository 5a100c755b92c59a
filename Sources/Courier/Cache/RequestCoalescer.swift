import CourierSync

/// Single flight: callers of ``run(_:_:)`` with the same key while one is in flight share its
/// result. The flight runs in a task of its own, so no caller's cancellation cuts the others
/// off; it is cancelled when every caller has left.
final class RequestCoalescer: Sendable {
    private final class Flight: Sendable {
        struct State: Sendable {
            var result: Result<HTTPResponse, any Error>?
            var waiters: [UInt64: UnsafeContinuation<HTTPResponse, any Error>] = [:]
            var members = 0
            var nextID: UInt64 = 0
            var task: Task<Void, Never>?
        }

        let state = LockedValue(State())
    }

    private let flights = LockedValue<[String: Flight]>([:])

    /// Runs `body` unless a call with `key` is in flight, whose result it then shares; `shared`
    /// tells which.
    func run(_ key: String, _ body: @escaping @Sendable () async throws -> HTTPResponse) async throws
        -> (response: HTTPResponse, shared: Bool)
    {
        let (flight, shared) = flights.withLock { flights -> (Flight, Bool) in
            if let flight = flights[key] {
                flight.state.withLock { $0.members += 1 }
                return (flight, true)
            }
            let flight = Flight()
            // Made under the lock, so a caller leaving at once finds the task to cancel.
            let task = Task {
                let result: Result<HTTPResponse, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                self.finish(key, flight, result)
            }
            flight.state.withLock {
                $0.members = 1
                $0.task = task
            }
            flights[key] = flight
            return (flight, false)
        }
        return (try await wait(for: flight, key: key), shared)
    }

    private func wait(for flight: Flight, key: String) async throws -> HTTPResponse {
        let id = flight.state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<HTTPResponse, any Error>) in
                let ready = flight.state.withLock { state -> Result<HTTPResponse, any Error>? in
                    if let result = state.result { return result }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready {
                    if case .failure(let error) = ready, error is CancellationError { leave(flight, key: key) }
                    continuation.resume(with: ready)
                }
            }
        } onCancel: {
            let waiter = flight.state.withLock { $0.waiters.removeValue(forKey: id) }
            guard let waiter else { return }
            leave(flight, key: key)
            waiter.resume(throwing: CancellationError())
        }
    }

    /// A caller left: the last one out cancels the flight, and later callers start a new one.
    private func leave(_ flight: Flight, key: String) {
        let abandoned = flight.state.withLock { state -> Task<Void, Never>? in
            state.members -= 1
            return state.members == 0 && state.result == nil ? state.task : nil
        }
        guard let abandoned else { return }
        flights.withLock { flights in
            if flights[key] === flight { flights[key] = nil }
        }
        abandoned.cancel()
    }

    private func finish(_ key: String, _ flight: Flight, _ result: Result<HTTPResponse, any Error>) {
        flights.withLock { flights in
            if flights[key] === flight { flights[key] = nil }
        }
        let waiters = flight.state.withLock { state in
            state.result = result
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
