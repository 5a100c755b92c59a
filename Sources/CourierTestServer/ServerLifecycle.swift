import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// Lets long-running handlers (delays, drips, stalls) end promptly when the server stops, so a
/// test that asked for a 20-second delay does not hold up the server's shutdown.
final class ServerLifecycle: Sendable {
    private let stopping = Atomic<Bool>(false)

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    func beginStopping() {
        stopping.store(true, ordering: .releasing)
    }

    /// Sleeps `duration`, in steps of at most 50 ms; throws `CancellationError` once the server stops.
    func pause(_ duration: Duration) async throws {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if isStopping { throw CancellationError() }
            try await Task.sleep(for: min(.milliseconds(50), deadline - ContinuousClock.now))
        }
    }
}

/// A Hummingbird application running in a service group of its own, listening: what the test
/// server, the storage testbench and `courier load --metrics-port` each start and stop the same way.
package struct RunningApplication: Sendable {
    let group: ServiceGroup
    let task: Task<Void, any Error>
    /// The port it listens on (the one asked for, or the one the system picked for 0).
    package let port: Int

    /// Starts `router` and returns once it accepts connections.
    package static func start<Builder: HTTPResponderBuilder>(router: Builder, configuration: ApplicationConfiguration,
                                                     logger: Logger) async throws -> RunningApplication
        where Builder.Responder.Context: InitializableFromSource<ApplicationRequestContextSource>
    {
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: configuration,
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            defer { portContinuation.finish() } // a listener that cannot bind ends the wait below
            try await group.run()
        }
        var iterator = portStream.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            if case .failure(let error) = await task.result { throw TestServerError.couldNotStart(String(describing: error)) }
            throw TestServerError.couldNotStart("the listener did not start")
        }
        return RunningApplication(group: group, task: task, port: port)
    }

    /// Stops accepting, closes connections and waits for the application to end.
    ///
    /// A client that vanished mid-body behind a middlebox (a reset the server never saw) leaves
    /// a handler waiting for bytes that never come, and the graceful shutdown would wait on it
    /// forever: after `grace` (2 s by default) what is left is cancelled.
    ///
    /// The cap also bounds a slow but healthy stop. Alone, a stop takes 4–16 ms. In the parallel
    /// suite, uncapped, it took a median of 8.7 s (p90 16 s), half of them with no connection open
    /// and nothing in flight, and cancelling at once instead still took 4.6 s. The suite keeps
    /// both cores busy, and every step of a stop runs on the NIO threads that all test servers
    /// share (stacks sampled mid-suite: the Swift pool idle, NIO's thread busy, hundreds of
    /// services' loops waiting). Hummingbird's report of the cancellation is below the logger's level.
    package func stop(grace: Duration = .seconds(2)) async {
        await group.triggerGracefulShutdown()
        let application = task
        let deadline = Task {
            try await Task.sleep(for: grace)
            application.cancel()
        }
        _ = await application.result
        deadline.cancel()
    }
}
