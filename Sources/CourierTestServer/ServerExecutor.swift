import Foundation

/// Threads of the test server's own, as the task executor of every server task (the listener,
/// each connection, each handler): the servers of a test process share them.
///
/// On the global pool the servers shared its threads, one per core, with the tests themselves.
/// A test that computed or blocked on all of them (hashing a large body, reading a file, waiting
/// on a child process) starved every server in the process: in the parallel suite a server with
/// no request in flight and no connection open took 1–5 s to stop, and a token endpoint took
/// 10–16 s to answer, longer than a client's idle timeout. The kernel shares the cores between
/// these threads and the pool's instead; none waits for the other to yield.
final class ServerExecutor: TaskExecutor, @unchecked Sendable { // `queue` is guarded by `condition`
    static let shared = ServerExecutor(threads: 2)

    private let condition = NSCondition()
    private var queue: [UnownedJob] = []
    private var head = 0

    private init(threads: Int) {
        for index in 0..<threads {
            let thread = Thread { self.run() } // the shared executor lives as long as the process
            thread.name = "courier-test-server-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        queue.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while head == queue.count { condition.wait() }
            let job = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
