import Courier
import CourierLoad
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// User flows: steps in order per user, values extracted from one response into the next
/// request, think time, per-step figures; against the test server's Notes API.
@Suite struct LoadFlowTests {
    static func crud(_ server: TestServer, extract: String = "json:$.id", think: String? = nil) -> Scenario {
        let notes = server.url("/notes/v1/notes").absoluteString
        return Scenario(requests: [], flows: [
            .init(name: "notes", steps: [
                .init(name: "create", method: "POST", url: notes, body: #"{"title":"{{uuid}}"}"#,
                      checks: ["status==200"], extract: ["id": extract]),
                .init(name: "read", url: notes + "/{{id}}", checks: ["json:$.title~^[0-9a-f-]{36}$"], think: think),
                .init(name: "delete", method: "DELETE", url: notes + "/{{id}}", checks: ["status==204"]),
            ]),
        ])
    }

    /// Create, read, delete: every note created is deleted, as the server's store shows.
    @Test func aCreateReadDeleteFlowLeavesNothingBehind() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = Self.crud(server, think: "20ms")
            options.concurrency = 8
            options.requests = 240 // runs of the flow
            let result = try await LoadRunner(options: options).run()
            #expect(result.requests == 720)
            #expect(result.errors == 0, "\(result.statusCodes) \(result.errorKinds)")
            #expect(Set(result.endpoints.keys) == ["notes/create", "notes/read", "notes/delete"])
            for step in ["notes/create", "notes/read", "notes/delete"] {
                #expect(result.endpoints[step]?.requests == 240, "\(step)")
                #expect(result.endpoints[step]?.latency.count == 240)
            }
            #expect(result.statusCodes == [200: 480, 204: 240])
            #expect(result.checks.map(\.fails) == [0, 0, 0])
            #expect(result.checks.map(\.passes) == [240, 240, 240])
            #expect(server.notes.noteIDs.isEmpty, "\(server.notes.noteIDs.count) notes left")
            // A threshold and the reports name a step as flow/step.
            #expect(try Threshold("notes/delete:errors<1%").evaluate(result).passed)
            #expect(!(try Threshold("notes/read:requests>240").evaluate(result).passed))
            #expect(LoadHTMLReport(result).html.contains("<td>notes/read</td><td>240</td>"))
            #expect(LoadReport(result).text.contains("notes/create"))
            // 30 runs per user, each thinking 20 ms after its read.
            #expect(result.durationSeconds >= 0.6)
        }
    }

    /// A placeholder may be the whole URL (issue 51): each run reads and deletes the note at the
    /// absolute `Location` its create answered, and the store ends empty.
    @Test func aFlowFollowsAnAbsoluteLocation() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = Scenario(requests: [], flows: [
                .init(name: "notes", steps: [
                    .init(name: "create", method: "POST", url: server.url("/notes/v1/notes").absoluteString,
                          body: #"{"title":"{{uuid}}"}"#, checks: ["status==200"], extract: ["next": "header:location"]),
                    .init(name: "read", url: "{{next}}", checks: ["status==200", "json:$.title~^[0-9a-f-]{36}$"]),
                    .init(name: "delete", method: "DELETE", url: "{{next}}", checks: ["status==204"]),
                ]),
            ])
            options.concurrency = 4
            options.requests = 40
            let result = try await LoadRunner(options: options).run()
            #expect(result.errors == 0, "\(result.statusCodes) \(result.errorKinds)")
            #expect(result.statusCodes == [200: 80, 204: 40])
            #expect(!result.checks.isEmpty && result.checks.allSatisfy { $0.fails == 0 }, "\(result.checks)")
            #expect(server.notes.noteIDs.isEmpty, "\(server.notes.noteIDs.count) notes left")
        }
    }

    /// A templated URL is checked as far as its text fixes it: a port past 65535 before the first
    /// placeholder is refused before the run, and one the placeholder fills fails its request.
    @Test func aTemplatedURLIsCheckedWhereItsTextFixesIt() async throws {
        try await withTestServer { server in
            let port = server.baseURL.port!
            func options(_ url: String) -> LoadOptions {
                var options = LoadOptions()
                options.scenario = Scenario(requests: [], flows: [
                    .init(name: "f", steps: [
                        .init(name: "first", url: server.url("/echo").absoluteString, extract: ["where": "json:$.path"]),
                        .init(name: "second", url: url),
                    ]),
                ])
                options.requests = 2
                options.concurrency = 1
                return options
            }
            // `PORT{{where}}` filled with a stand-in digit overflowed the port before.
            let result = try await LoadRunner(options: options("http://127.0.0.1:\(port){{where}}")).run()
            #expect(result.errors == 0, "\(result.errorKinds)")
            #expect(result.statusCodes == [200: 4])
            await #expect(throws: LoadError.self) { _ = try await LoadRunner(options: options("http://127.0.0.1:99999/{{where}}")).run() }
            await #expect(throws: LoadError.self) { _ = try await LoadRunner(options: options("ftp://x/{{where}}")).run() }
            let filled = try await LoadRunner(options: options("http://127.0.0.1:9999{{seq}}/")).run()
            #expect(filled.errorKinds["invalidRequest"] == 2, "filled, ports 99990 and 99991 fail their requests: \(filled.errorKinds)")
        }
    }

    /// A value not found stops that run of the flow: nothing after it is sent, and the steps not
    /// sent are counted as skipped, not as requests (40 requests went out, not 80).
    @Test func aValueNotFoundStopsTheRunOfTheFlow() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = Self.crud(server, extract: "json:$.nothing")
            options.concurrency = 4
            options.requests = 40
            let result = try await LoadRunner(options: options).run()
            #expect(result.requests == 40, "only the creates went out")
            #expect(result.skipped == 80, "each run left its read and its delete unsent")
            #expect(result.errors == 0)
            #expect(result.endpoints["notes/create"]?.requests == 40)
            #expect(result.endpoints["notes/read"]?.requests == 0)
            #expect(result.endpoints["notes/read"]?.skipped == 40)
            #expect(result.endpoints["notes/delete"]?.skipped == 40)
            #expect(result.errorKinds.isEmpty)
            #expect(result.checks.first { $0.expression.hasPrefix("json:$.title") }?.fails == 40, "the unsent read's check fails")
            #expect(LoadReport(result).text.contains("Not sent      80 flow steps"))
            let decoded = try LoadResult.decode(try result.jsonData())
            #expect(decoded.skipped == 80 && decoded.endpoints["notes/read"]?.skipped == 40)
            #expect(server.notes.noteIDs.count == 40) // created, never deleted: the flow stopped
        }
    }

    /// Headers and regular expressions extract too; the open model starts runs of the flow at its rate.
    @Test func headersAndPatternsExtractAndTheOpenModelPacesRuns() async throws {
        try await withTestServer { server in
            let notes = server.url("/notes/v1/notes").absoluteString
            var options = LoadOptions()
            options.scenario = Scenario(requests: [], flows: [
                .init(name: "n", steps: [
                    .init(name: "create", method: "POST", url: notes, body: #"{"title":"t"}"#,
                          extract: ["id": #"regex:"id":\s*"([^"]+)""#]),
                    .init(name: "read", url: notes + "/{{id}}", extract: ["etag": "header:ETag"]),
                    .init(name: "revalidate", url: notes + "/{{id}}", headers: ["If-None-Match": "{{etag}}"], checks: ["status==304"]),
                    .init(name: "delete", method: "DELETE", url: notes + "/{{id}}"),
                ]),
            ])
            options.rate = 50
            options.concurrency = 8
            options.duration = .seconds(1)
            let result = try await LoadRunner(options: options).run()
            #expect(result.endpoints["n/create"]?.requests == 50)
            #expect(result.checks.first?.passes == 50, "the ETag came back: \(result.statusCodes)")
            #expect(result.endpoints["n/delete"]?.requests == 50 && result.errors == 0, "\(result.errorKinds)")
            #expect(server.notes.noteIDs.isEmpty)
        }
    }

    /// Everything a flow can get wrong is an error before the run, naming the flow, step and value.
    @Test func malformedFlowsAreRefusedBeforeTheRun() throws {
        func refusal(_ json: String) -> String {
            do {
                var options = LoadOptions()
                options.scenario = try Scenario(json: Data(json.utf8))
                _ = try LoadRunner(options: options)
                return "accepted"
            } catch let error as LoadError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        let url = "http://127.0.0.1:9/notes"
        #expect(refusal(#"[{"name": "f", "flow": [{"url": "\#(url)/{{id}}"}, {"url": "\#(url)", "extract": {"id": "json:$.id"}}]}]"#)
            .contains("{{id}} is not a built-in (uuid, seq, randomInt, now), no earlier step of the flow extracts it, and no --data file gives columns"))
        #expect(refusal(#"[{"name": "f", "flow": [{"url": "\#(url)", "extract": {"id": "xml:/id"}}]}]"#)
            .contains("expected json:PATH, header:NAME or regex:PATTERN"))
        #expect(refusal(#"[{"name": "f", "flow": [{"url": "\#(url)", "extract": {"id": "regex:("}}]}]"#)
            .contains("not a regular expression"))
        #expect(refusal(#"[{"name": "f", "flow": [{"name": "s", "url": "\#(url)", "think": "soon"}]}]"#)
            .contains("flow \"f\" step \"f/s\": think soon is not a duration"))
        #expect(refusal(#"[{"name": "f", "url": "\#(url)", "flow": [{"url": "\#(url)"}]}]"#).contains("both a flow and a request"))
        #expect(refusal(#"[{"flow": [{"url": "\#(url)"}]}]"#).contains("flow 1 has no name"))
        #expect(refusal(#"[{"name": "f", "flow": []}]"#).contains("flow \"f\" has no steps"))
        #expect(refusal(#"[{"url": "\#(url)", "extract": {"id": "json:$.id"}}]"#).contains("belong to a flow's steps"))
        #expect(refusal(#"[{"name": "f", "weight": 0, "flow": [{"url": "\#(url)"}]}]"#).contains("weight 0.0 of flow \"f\""))
        #expect(refusal(#"[{"name": "f", "flow": [{"url": "\#(url)", "extract": {"id": "json:$.id"}}, {"url": "\#(url)/{{id}}"}]}]"#) == "accepted")
    }
}
