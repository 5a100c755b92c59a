/// The service's injected clock (``ServiceActor/Configuration/TestHooks/clock``) as plain readings since
/// the service began, and waits on it: rate limits and circuit breakers keep time as pure values,
/// and tests drive them with a virtual clock.
struct ServiceTime: Sendable {
    let now: @Sendable () -> Duration
    let sleep: @Sendable (Duration) async throws -> Void

    init(_ clock: any Clock<Duration>) {
        self = Self.opening(clock)
    }

    private init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.now = now
        self.sleep = sleep
    }

    private static func opening<C: Clock<Duration>>(_ clock: C) -> ServiceTime {
        let origin = clock.now
        return ServiceTime(now: { origin.duration(to: clock.now) }, sleep: { try await clock.sleep(for: $0) })
    }
}
