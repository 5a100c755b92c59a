import ArgumentParser
import Courier
import Foundation

/// An idle service: after one request, nothing for `--seconds`. Its CPU over that window is
/// the loop's cost of waiting (the bound: at most 1% of one core).
struct Idle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "CPU of a service that sends nothing for a while.")

    @Option(help: "A URL for the one warm-up request (a connection to keep alive).") var url: String
    @Option(help: "Seconds to stay idle.") var seconds = 10.0

    func run() async throws {
        guard let target = URL(string: url) else { throw ValidationError("bad --url") }
        try await withService { service in
            _ = try await service.send(HTTPRequest(url: target))
            let before = Usage.now()
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            let after = Usage.now()
            print(String(format: "idle-seconds %.1f  cpu-percent %.3f", after.wall - before.wall,
                         (after.cpu - before.cpu) / (after.wall - before.wall) * 100))
        }
    }
}
