import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
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
    /// The listening channel: a graceful shutdown closes it first.
    let listener: any Channel
    /// The port it listens on (the one asked for, or the one the system picked for 0).
    package let port: Int

    /// Starts `router` and returns once it accepts connections.
    package static func start<Builder: HTTPResponderBuilder>(router: Builder, server: HTTPServerBuilder = .http1(),
                                                     configuration: ApplicationConfiguration,
                                                     logger: Logger) async throws -> RunningApplication
        where Builder.Responder.Context: InitializableFromSource<ApplicationRequestContextSource>
    {
        let (listenerStream, listenerContinuation) = AsyncStream.makeStream(of: (any Channel).self)
        let app = Application(
            router: router,
            server: server,
            configuration: configuration,
            onServerRunning: { channel in
                listenerContinuation.yield(channel)
                listenerContinuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            defer { listenerContinuation.finish() } // a listener that cannot bind ends the wait below
            try await group.run()
        }
        var iterator = listenerStream.makeAsyncIterator()
        guard let listener = await iterator.next(), let port = listener.localAddress?.port, port > 0 else {
            task.cancel()
            if case .failure(let error) = await task.result { throw TestServerError.couldNotStart(String(describing: error)) }
            throw TestServerError.couldNotStart("the listener did not start")
        }
        return RunningApplication(group: group, task: task, listener: listener, port: port)
    }

    /// Stops accepting, closes connections and waits for the application to end.
    ///
    /// A client that vanished mid-body behind a middlebox (a reset the server never saw) leaves
    /// a handler waiting for bytes that never come, and the graceful shutdown would wait on it
    /// forever: `grace` (2 s by default) after the listener closed, what is left is cancelled.
    ///
    /// Not sooner: cancelling the application while its listener still accepts can leave an
    /// accepted connection that no task took up, and NIO traps on it ("Deinited NIOAsyncWriter
    /// without calling finish()", apple/swift-nio#3481; seen once in the suite). The graceful
    /// shutdown closes the listener first; after that only a connection accepted just before the
    /// close and still not taken up `grace` later could meet the cancellation. In the parallel
    /// suite the listener closed a median of 1.5 s after the stop began (p90 3.6 s), so a cap
    /// counted from the stop's start cancelled most applications while they still listened.
    ///
    /// The cap also bounds a slow but healthy stop. Alone, a stop takes 4–16 ms; with every test
    /// of the suite at once on two cores, most stops in its first 20 s reached the cap (the
    /// Makefile's `SUITE_WIDTH` has the figures, and why `make test` runs 16 at a time).
    /// Hummingbird's report of the cancellation is below the logger's level.
    package func stop(grace: Duration = .seconds(2)) async {
        await group.triggerGracefulShutdown()
        try? await listener.closeFuture.get()
        let application = task
        let deadline = Task {
            try await Task.sleep(for: grace)
            application.cancel()
        }
        _ = await application.result
        deadline.cancel()
    }
}
