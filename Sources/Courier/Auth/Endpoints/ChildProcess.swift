import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to its end with a deadline, its standard output and error captured together:
/// the credential executables of workload identity federation. It waits on a thread of its own,
/// never the cooperative pool's.
enum ChildProcess {
    struct Outcome: Sendable {
        /// The exit status; nil when the deadline passed and the program was killed.
        var status: Int32?
        var output: Data
    }

    /// - Parameters:
    ///   - arguments: The program (looked up in `PATH`) and its arguments.
    ///   - environment: Added to this process's environment.
    static func run(_ arguments: [String], environment: [String: String], timeout: Duration) async throws(AuthError) -> Outcome {
        guard let program = arguments.first else { throw AuthError(.invalidCredentials, message: "the executable's command is empty") }
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        let variables = merged.map { "\($0.key)=\($0.value)" }
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
                Thread.detachNewThread {
                    continuation.resume(with: Result { () throws(AuthError) in
                        try spawnAndWait(program: program, arguments: arguments, variables: variables, timeout: timeout)
                    })
                }
            }
        } catch let error as AuthError {
            throw error
        } catch {
            throw AuthError(.subjectTokenSource, message: "\(program) failed: \(error)")
        }
    }

    private static func spawnAndWait(program: String, arguments: [String], variables: [String], timeout: Duration) throws(AuthError) -> Outcome {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else { throw AuthError(.subjectTokenSource, message: "cannot make a pipe for \(program)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        _ = fcntl(pipe[1], F_SETFD, FD_CLOEXEC) // dup2 into 1 and 2 clears it there
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var argv = arguments.map { strdup($0) } + [nil]
        var envp = variables.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, &actions, nil, &argv, &envp)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else {
            throw AuthError(.subjectTokenSource, message: "cannot run \(program): \(String(cString: strerror(spawned)))")
        }
        // The read end is non-blocking, and the end is the program's exit, not end of file: a
        // program spawned at the same moment by another thread of this process may hold a copy
        // of the write end (Glibc's module offers no pipe2 to make it close-on-exec atomically).
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe[0], F_SETFL, fcntl(pipe[0], F_GETFL) | O_NONBLOCK)
        var output = Data()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var chunk = [UInt8](repeating: 0, count: 4096)
        func drain() {
            while true {
                let count = read(pipe[0], &chunk, chunk.count)
                guard count > 0 else { return }
                // A credential answer is small: a runaway program cannot fill memory.
                if output.count < 1 << 20 { output.append(contentsOf: chunk[..<count]) }
            }
        }
        var status: Int32 = 0
        var hungUp = false
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped == -1 && errno != EINTR {
                throw AuthError(.subjectTokenSource, message: "\(program) could not be waited for (errno \(errno))")
            }
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return Outcome(status: nil, output: output)
            }
            if hungUp {
                usleep(20_000) // output closed, the program still running: only its exit is awaited
            } else {
                var descriptor = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, 20) // wakes for output, else checks the exit every 20 ms
                hungUp = descriptor.revents & Int16(POLLHUP) != 0 && descriptor.revents & Int16(POLLIN) == 0
            }
            drain()
        }
        drain()
        let exited = status & 0x7f == 0
        return Outcome(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output: output)
    }
}
