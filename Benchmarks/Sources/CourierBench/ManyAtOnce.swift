import ArgumentParser
import Courier
import Foundation

/// Many requests at once as users write it without workers: a task group keeping `width`
/// children (one per request) in flight, or `service.sendAll`. Each round sends `count`
/// requests; a timed run repeats rounds of 20,000 (their ramp-down at the end is under 1 %).
enum ManyAtOnce {
    static let round = 20_000

    static func childPerRequest(_ service: ServiceActor, _ request: HTTPRequest, _ width: Int, _ count: Int) async throws {
        try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
            var started = 0
            while started < min(width, count) {
                group.addTask { try await service.send(request) }
                started += 1
            }
            while let response = try await group.next() {
                guard response.status == 200 else { throw ValidationError("status \(response.status)") }
                if started < count {
                    group.addTask { try await service.send(request) }
                    started += 1
                }
            }
        }
    }

    static func sendAll(_ service: ServiceActor, _ request: HTTPRequest, _ width: Int, _ count: Int) async throws {
        for await (_, result) in service.sendAll(repeatElement(request, count: count), maxInFlight: width) {
            guard try result.get().status == 200 else { throw ValidationError("status not 200") }
        }
    }

    static func measure(work: ClosedLoop.Work, _ run: @Sendable (Int) async throws -> Void) async throws {
        if case .seconds = work { try await run(2_000) } // connections, handles, caches
        let before = Usage.now()
        var count = 0
        switch work {
        case .seconds(let seconds):
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            while ContinuousClock.now < deadline {
                try await run(round)
                count += round
            }
        case .requests(let total):
            try await run(total)
            count = total
        }
        let after = Usage.now()
        let wall = after.wall - before.wall
        let cpu = (after.cpu - before.cpu) / Double(count) * 1e6
        print(String(format: "requests/s %.0f  cpu-us/request %.1f  peak-rss-MiB %.1f  requests %d  errors 0",
                     Double(count) / wall, cpu, Double(Usage.peakRSSKiB()) / 1024, count))
    }
}
