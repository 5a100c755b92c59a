/// What a caller about to wait decided under its lock: go on at once, stop because its work was
/// cancelled, or stay parked until whoever holds its continuation resumes it. The continuation is
/// settled after the lock is released, never under it.
enum WaitDecision: Sendable {
    case proceed
    case cancelled
    case parked

    func settle(_ continuation: some VoidContinuation) {
        switch self {
        case .proceed: continuation.resume()
        case .cancelled: continuation.resume(throwing: CancellationError())
        case .parked: break
        }
    }
}

/// A continuation that returns nothing or throws: checked and unsafe ones alike.
protocol VoidContinuation {
    func resume()
    func resume(throwing error: any Error)
}

extension CheckedContinuation: VoidContinuation where T == Void, E == any Error {}
extension UnsafeContinuation: VoidContinuation where T == Void, E == any Error {}
