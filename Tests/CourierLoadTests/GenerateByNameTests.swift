@testable import CourierCommands
import CourierGenerator
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

/// `courier generate <api>:<version>`: the document fetched from a Discovery service (the test
/// server's fake, through `--discovery-root`), its revision recorded, a changed document found
/// by `--check`, and every failure a clear error with nothing written.
@Suite struct GenerateByNameTests {
    static var courier: URL { LoadCommandTests.courier }
    static let tasksDocument = Repository.path("Sources/GoogleTasks/discovery.json")

    func withFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-generate-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await body(folder)
    }

    @Test func namesParse() {
        #expect(DiscoveryName("drive:v3") == DiscoveryName("drive:v3") && DiscoveryName("drive:v3")?.api == "drive")
        #expect(DiscoveryName("admin:directory_v1")?.version == "directory_v1")
        #expect(DiscoveryName("drive") == nil && DiscoveryName("drive:") == nil && DiscoveryName(":v3") == nil)
        #expect(DiscoveryName.lacksVersion("drive") && !DiscoveryName.lacksVersion("storage.v1.json"))
        let url = DiscoveryName("drive:v3")!.url(root: URL(string: "https://www.googleapis.com/")!)
        #expect(url.absoluteString == "https://www.googleapis.com/discovery/v1/apis/drive/v3/rest")
    }

    /// The fetched document generates the very files of the shipped GoogleTasks client, which
    /// compiles in this build; `--check` passes until the service publishes a new revision.
    @Test func aNamedAPIIsFetchedGeneratedAndChecked() async throws {
        try await withTestServer { server in
            let document = try Data(contentsOf: Self.tasksDocument)
            server.discovery.publish(document, name: "tasks", version: "v1")
            try await withFolder { folder in
                let arguments = ["generate", "tasks:v1", "--discovery-root", server.baseURL.absoluteString,
                                 "--module", "GoogleTasks", "--output", folder.path]
                let run = try await runProcess(Self.courier, arguments, timeout: 120)
                #expect(run.status == 0, "\(run.error)")
                for name in ["Tasks.swift", "Tasks+Queries.swift", "Tasks+Schemas.swift"] {
                    let generated = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                    let shipped = try String(contentsOf: Repository.path("Sources/GoogleTasks/\(name)"), encoding: .utf8)
                    #expect(generated == shipped, "\(name) differs from the shipped client")
                    #expect(DiscoveryStamp.recorded(in: generated)?.revision == "20261101")
                }
                #expect(try await runProcess(Self.courier, arguments + ["--check"], timeout: 120).status == 0)

                // Google publishes a new revision: --check says so, and which.
                var json = try JSONSerialization.jsonObject(with: document) as! [String: Any]
                json["revision"] = "20261201"
                json["etag"] = "\"new-etag\""
                server.discovery.publish(try JSONSerialization.data(withJSONObject: json), name: "tasks", version: "v1")
                let changed = try await runProcess(Self.courier, arguments + ["--check"], timeout: 120)
                #expect(changed.status == 1)
                #expect(changed.error.contains("revision 20261101 → 20261201"), "\(changed.error)")
                #expect(server.discovery.requestCount == 3)
            }
        }
    }

    /// `courier serve --discovery <folder>`'s part: every Discovery document of a folder under its
    /// own name and version, other JSON left alone.
    @Test func aFolderIsPublishedUnderItsDocumentsNames() async throws {
        try await withTestServer { server in
            try await withFolder { folder in
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try Data(contentsOf: Self.tasksDocument).write(to: folder.appendingPathComponent("whatever.json"))
                try Data(#"{"kind":"something#else","name":"x","version":"v1"}"#.utf8).write(to: folder.appendingPathComponent("x.json"))
                let published = try server.discovery.publishFolder(folder)
                #expect(published.map { "\($0.name):\($0.version)" } == ["tasks:v1"])
                let fetched = try await DiscoveryName("tasks:v1")!.fetch(root: server.baseURL)
                #expect(fetched == (try Data(contentsOf: Self.tasksDocument)))
                await #expect(throws: DiscoveryFetchError.self) { try await DiscoveryName("x:v1")!.fetch(root: server.baseURL) }
            }
        }
    }

    @Test func failuresAreClearAndWriteNothing() async throws {
        try await withTestServer { server in
            try await withFolder { folder in
                let unknown = try await runProcess(Self.courier, ["generate", "nosuchapi:v9", "--discovery-root",
                                                                  server.baseURL.absoluteString, "--output", folder.path], timeout: 120)
                #expect(unknown.status == 1)
                #expect(unknown.error.contains("knows no API nosuchapi:v9"), "\(unknown.error)")

                let noVersion = try await runProcess(Self.courier, ["generate", "drive", "--output", folder.path], timeout: 60)
                #expect(noVersion.status == 64)
                #expect(noVersion.error.contains("drive:<version>"), "\(noVersion.error)")

                let unreachable = "http://127.0.0.1:\(unusedPort())/"
                let network = try await runProcess(Self.courier, ["generate", "drive:v3", "--discovery-root", unreachable,
                                                                  "--api-key", "AIza-\(SuiteLog.marker)-key", "--output", folder.path],
                                                   timeout: 120)
                #expect(network.status == 1)
                #expect(network.error.contains("could not fetch the drive:v3 Discovery document"), "\(network.error)")
                #expect(!network.error.contains(SuiteLog.marker))

                let badRoot = try await runProcess(Self.courier, ["generate", "drive:v3", "--discovery-root", "ftp://x/"], timeout: 60)
                #expect(badRoot.status == 64)
                #expect(!FileManager.default.fileExists(atPath: folder.path), "a failed run wrote into \(folder.path)")
            }
        }
    }
}
