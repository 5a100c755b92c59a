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
        var output = Data()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var finished = false
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !finished {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { break }
            var descriptor = pollfd(fd: pipe[0], events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(remaining, .seconds(1)).seconds * 1000) + 1
            guard poll(&descriptor, 1, milliseconds) >= 0 || errno == EINTR else { break }
            guard descriptor.revents != 0 else { continue }
            let count = read(pipe[0], &chunk, chunk.count)
            if count > 0 {
                // A credential answer is small: a runaway program cannot fill memory.
                if output.count < 1 << 20 { output.append(contentsOf: chunk[..<count]) }
            } else if count == 0 || errno != EINTR {
                finished = true // end of output: the program closed it, usually by exiting
            }
        }
        var status: Int32 = 0
        if !finished {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            return Outcome(status: nil, output: output)
        }
        // Output closed; the program may still run (it closed its descriptors): bounded by the same deadline.
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return Outcome(status: nil, output: output)
            }
            usleep(1000)
        }
        let exited = status & 0x7f == 0
        return Outcome(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output: output)
    }
}
