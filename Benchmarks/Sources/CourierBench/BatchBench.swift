import ArgumentParser
import Courier
import Foundation

/// 100 GETs against the test server's Notes API (run `CourierBench serve` first): as one wire
/// batch, as a task-group batch, and one after another. Median of `runs`.
struct BatchBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "batch", abstract: "Wire batch vs task-group batch vs sequential.")

    @Option(help: "The test server's base URL.") var url: String
    @Option(help: "Queries per measurement.") var queries = 100
    @Option(help: "Measurements per form.") var runs = 9

    struct Note: APIObject {
        var json: JSONObject
        var userProperties = UserProperties()
        init(json: JSONObject = [:]) { self.json = json }
    }

    func run() async throws {
        let base = URL(string: url)!
        let api = APIDescription(name: "notes", version: "v1", rootURL: base, servicePath: "notes/v1/")
        var configuration = ServiceActor.Configuration()
        configuration.limits.batchConcurrency = 10
        try await withService(configuration: configuration) { service in
            _ = try await service.send(HTTPRequest(method: .post, url: base.appendingPathComponent("notes/v1/reset")))
            _ = try await service.send(HTTPRequest(method: .post, url: URL(string: "\(url)/notes/v1/seed?count=\(queries)")!))
            func makeQueries() -> [Query<Note>] {
                (1...queries).map { Query(api: api, name: "notes.notes.get", path: "notes/{id}",
                                          pathParameters: ["id": String(format: "note-%04d", $0)]) }
            }
            func median(_ body: () async throws -> Void) async rethrows -> Double {
                var times: [Double] = []
                for _ in 0..<runs {
                    let start = ContinuousClock.now
                    try await body()
                    let elapsed = ContinuousClock.now - start
                    times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                }
                return times.sorted()[times.count / 2]
            }
            let wire = try await median {
                var batch = QueryBatch()
                for query in makeQueries() { batch.add(query) }
                let results = try await service.executeBatch(batch)
                precondition(results.failures.isEmpty)
            }
            let group = try await median {
                var batch = QueryBatch()
                for query in makeQueries() { batch.add(query) }
                let results = try await service.batch(batch)
                precondition(results.failures.isEmpty)
            }
            let sequential = try await median {
                for query in makeQueries() { _ = try await service.execute(query) }
            }
            print(String(format: "%d GETs, median of %d: wire batch %.1f ms, task-group batch (10 at once) %.1f ms, sequential %.1f ms",
                         queries, runs, wire, group, sequential))
        }
    }
}
