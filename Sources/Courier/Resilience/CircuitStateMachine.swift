/// One host's circuit as a pure value: admissions and outcomes in, transitions out. Times are
/// readings of the service's clock; the shell (``CircuitBreakers``) supplies them.
struct CircuitStateMachine: Sendable {
    enum Admission: Sendable, Equatable {
        case allowed
        /// Let through as the half-open probe: report its outcome with `probe: true`.
        case probe
        case rejected(retryAfter: Duration?)
    }

    enum Outcome: Sendable { case success, failure, abandoned }

    private enum State: Sendable, Equatable {
        case closed(failures: Int)
        case open(until: Duration, spell: Duration)
        case halfOpen(probes: Int, spell: Duration)
    }

    let policy: CircuitBreakerPolicy
    private var state = State.closed(failures: 0)

    init(policy: CircuitBreakerPolicy) {
        self.policy = policy
    }

    var current: CircuitState {
        switch state {
        case .closed: .closed
        case .open: .open
        case .halfOpen: .halfOpen
        }
    }

    /// Whether a request may go now. Returns the transition to half-open, if this made one.
    mutating func admit(now: Duration) -> (Admission, CircuitState?) {
        switch state {
        case .closed:
            return (.allowed, nil)
        case .open(let until, let spell):
            guard now >= until else { return (.rejected(retryAfter: until - now), nil) }
            state = .halfOpen(probes: 1, spell: spell)
            return (.probe, .halfOpen)
        case .halfOpen(let probes, let spell):
            guard probes < policy.halfOpenProbes else { return (.rejected(retryAfter: nil), nil) }
            state = .halfOpen(probes: probes + 1, spell: spell)
            return (.probe, nil)
        }
    }

    /// Reports how an admitted request went; returns the transition it made, if any. Outcomes of
    /// requests let through before the circuit opened change nothing once it is open.
    mutating func record(_ outcome: Outcome, probe: Bool, now: Duration) -> CircuitState? {
        switch state {
        case .closed(let failures):
            switch outcome {
            case .success: state = .closed(failures: 0)
            case .abandoned: break
            case .failure:
                guard failures + 1 >= policy.failureThreshold else {
                    state = .closed(failures: failures + 1)
                    return nil
                }
                state = .open(until: now + policy.openDuration, spell: policy.openDuration)
                return .open
            }
            return nil
        case .open:
            return nil
        case .halfOpen(let probes, let spell):
            guard probe else { return nil }
            switch outcome {
            case .success:
                state = .closed(failures: 0)
                return .closed
            case .failure:
                let longer = min(spell * 2, policy.maximumOpenDuration)
                state = .open(until: now + longer, spell: longer)
                return .open
            case .abandoned:
                state = .halfOpen(probes: max(0, probes - 1), spell: spell)
                return nil
            }
        }
    }
}
