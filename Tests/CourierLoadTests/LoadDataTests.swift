import Courier
@testable import CourierLoad
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Data-driven requests (`--data`, `{{…}}`): each request filled from its row and the built-ins.
@Suite struct LoadDataTests {
    @Test func csvIsReadAsRFC4180() throws {
        let text = "id,name,note\r\n1,Ada,\"says \"\"hi\"\", then leaves\"\r\n\n2,\"Grace, R.\",\"two\nlines\"\n3,,\n"
        let data = try LoadData(text: text, jsonLines: false, source: "t.csv")
        #expect(data.columns == ["id", "name", "note"])
        #expect(data.rows == [["1", "Ada", "says \"hi\", then leaves"], ["2", "Grace, R.", "two\nlines"], ["3", "", ""]])
    }

    @Test(arguments: [
        ("id,name\n1\n", "row 1 has 1 fields, the header 2"), ("id,\"name\n1,2\n", "a quoted field is not closed"),
        ("id,id\n1,2\n", "a column name appears twice"), ("id,\n1,2\n", "column 2 has no name"),
        ("id\n1\"2\n", "line 2: a quote inside an unquoted field"), ("", "empty, expected a header row"), ("id\n", "no rows"),
    ])
    func badCSVNamesTheFileAndTheFault(text: String, message: String) {
        #expect {
            _ = try LoadData(text: text, jsonLines: false, source: "users.csv")
        } throws: { error in
            let text = (error as? LoadError)?.message ?? ""
            return text.contains("users.csv") && text.contains(message)
        }
    }

    @Test func ndjsonRowsAreObjects() throws {
        let data = try LoadData(text: "{\"id\":1,\"name\":\"Ada\"}\n\n{\"id\":2,\"tags\":[\"x\"],\"name\":null}\n", jsonLines: true, source: "u.ndjson")
        #expect(data.columns == ["id", "name", "tags"])
        #expect(data.rows == [["1", "Ada", ""], ["2", "", "[\"x\"]"]])
        #expect(throws: LoadError.self) { try LoadData(text: "[1]\n", jsonLines: true, source: "u.ndjson") }
    }

    /// Which row a request gets is a function of its number: shards take disjoint rows.
    @Test func rowsByMode() throws {
        var data = try LoadData(text: "n\n0\n1\n2\n3\n4\n", jsonLines: false, source: "n.csv")
        #expect((0..<7).map { data.row(for: $0)![0] } == ["0", "1", "2", "3", "4", "0", "1"])
        data.mode = .unique
        #expect(data.row(for: 4)?[0] == "4" && data.row(for: 5) == nil)
        data.mode = .random
        let draws = (0..<5_000).map { Int(data.row(for: $0)![0])! }
        #expect(draws == (0..<5_000).map { Int(data.row(for: $0)![0])! }, "the same draw every time")
        for row in 0..<5 { #expect((900...1100).contains(draws.filter { $0 == row }.count), "row \(row) drawn about 1,000 times") }
    }

    @Test func templatesParseBuiltInsAndColumns() throws {
        let template = try LoadTemplate("/u/{{ id }}?n={{seq}}&r={{randomInt 7 7}}&k={{uuid}}", context: "t")
        #expect(template.names == ["id"])
        let text = template.render(number: 41) { $0 == "id" ? "ada" : nil }
        #expect(text.hasPrefix("/u/ada?n=41&r=7&k="))
        #expect(UUID(uuidString: String(text.split(separator: "=").last!)) != nil)
        #expect(try LoadTemplate("plain", context: "t").isConstant)
        let now = try LoadTemplate("{{now}}", context: "t").render(number: 0) { _ in nil }
        #expect(now.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(now)")
        for (bad, message) in [("{{id", "not closed"), ("{{}}", "empty"), ("{{randomInt 9 1}}", "LOW <= HIGH"),
                               ("{{seq 2}}", "takes no arguments"), ("{{a b}}", "is not a column or a built-in")] {
            #expect(throws: LoadError.self, "\(bad)") { try LoadTemplate(bad, context: "t") }
            do { _ = try LoadTemplate(bad, context: "--body") } catch let error as LoadError {
                #expect(error.message.hasPrefix("--body: ") && error.message.contains(message), "\(error.message)")
            }
        }
    }

    /// A placeholder that names no column is an error before the run, naming the column and the file.
    @Test func aMissingColumnIsAnErrorBeforeTheRun() throws {
        var options = LoadOptions()
        options.urlTemplate = "http://127.0.0.1:9/users/{{user}}"
        #expect(throws: LoadError.invalidArgument("the request URL: {{user}} is not a built-in (uuid, seq, randomInt, now), and no --data file gives columns")) {
            try LoadRunner(options: options)
        }
        options.data = try LoadData(text: "id,name\n1,a\n", jsonLines: false, source: "users.csv")
        #expect(throws: LoadError.invalidArgument("the request URL: {{user}} names no column of users.csv (columns: id, name)")) {
            try LoadRunner(options: options)
        }
        options.urlTemplate = "http://127.0.0.1:9/users/{{id}}"
        options.headers = [("X-Name", "{{nom}}")]
        #expect(throws: LoadError.invalidArgument("the request header X-Name: {{nom}} names no column of users.csv (columns: id, name)")) {
            try LoadRunner(options: options)
        }
    }

    /// Requests that depend on the row alone are filled before the run: a row that cannot make
    /// a request is an error then, naming the file and the row.
    @Test func aBadRowIsAnErrorBeforeTheRun() throws {
        var options = LoadOptions()
        options.urlTemplate = "http://127.0.0.1:9/users/{{id}}"
        options.headers = [("X-Name", "{{name}}")]
        options.data = try LoadData(text: "id,name\n1,ada\n2,\"two\nlines\"\n", jsonLines: false, source: "users.csv")
        #expect {
            try LoadRunner(options: options)
        } throws: { error in
            ((error as? LoadError)?.message ?? "").hasPrefix("users.csv row 2, for GET /users/{{id}}: ")
        }
        // With a built-in the request is filled as it is sent, and that request alone fails.
        options.headers = [("X-Name", "{{name}}-{{seq}}")]
        _ = try LoadRunner(options: options)
    }

    static func csv(_ count: Int) throws -> LoadData {
        try LoadData(text: "id\n" + (0..<count).map { "row-\($0)" }.joined(separator: "\n"), jsonLines: false, source: "rows.csv")
    }

    /// Sequential mode with as many requests as rows: the server sees each row exactly once, in
    /// one process and across 4 shards (each key's count is checked at the server: `count==1`).
    @Test(arguments: [1, 4])
    func eachRowIsUsedExactlyOnce(shards: Int) async throws {
        try await withTestServer { server in
            let run = UUID().uuidString.prefix(8)
            var totals = (requests: 0, passes: 0)
            for index in 0..<shards {
                var options = LoadOptions()
                options.urlTemplate = server.url("/count/").absoluteString + "\(run)-{{id}}"
                options.data = try Self.csv(203)
                options.requests = 203
                options.concurrency = 8
                options.checks = [try LoadCheck("json:$.count==1")]
                if shards > 1 { options.shard = try LoadShard(index: index, count: shards) }
                let result = try await LoadRunner(options: options).run()
                #expect(result.errors == 0)
                totals.requests += result.requests
                totals.passes += result.checks[0].passes
            }
            #expect(totals.requests == 203)
            #expect(totals.passes == 203, "every row reached the server once")
            // And no row twice: a second request for any row would count 2.
            let again = try await withCheckedService { service in try await service.send(HTTPRequest(url: server.url("/count/\(run)-row-0"))) }
            #expect(String(decoding: again.body, as: UTF8.self).contains("\"count\":2"))
        }
    }

    /// Unique mode ends the run when the rows run out, whatever the duration. The duration is
    /// long so that the bound tells "ended with the data" from "ended with the clock" even when
    /// the parallel suite starves the pool (57 requests have taken 21 s there, 0.07 s alone).
    @Test func uniqueModeEndsWithTheData() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.urlTemplate = server.url("/count/").absoluteString + "\(UUID().uuidString.prefix(8))-{{id}}"
            options.data = try Self.csv(57)
            options.data?.mode = .unique
            options.duration = .seconds(300)
            options.concurrency = 4
            options.checks = [try LoadCheck("json:$.count==1")]
            let result = try await LoadRunner(options: options).run()
            #expect(result.requests == 57)
            #expect(result.checks[0].passes == 57)
            #expect(result.durationSeconds < 150)
        }
    }

    /// Headers and bodies are filled too, built-ins included, and what is sent is what was filled.
    @Test func headersAndBodiesAreFilled() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = Scenario(requests: [
                .init(name: "echo", method: "POST", url: server.url("/echo").absoluteString,
                      headers: ["X-User": "{{name}}"], body: #"{"id":"{{id}}","n":{{randomInt 3 3}},"seq":{{seq}}}"#,
                      checks: [#"json:$.body~^\{"id":"[0-9]+","n":3,"seq":[0-9]+\}$"#, #"body~\["X-User","(ada|grace)"\]"#]),
            ])
            options.data = try LoadData(text: "id,name\n10,ada\n11,grace\n", jsonLines: false, source: "u.csv")
            options.requests = 20
            options.concurrency = 2
            let result = try await LoadRunner(options: options).run()
            #expect(result.errors == 0)
            #expect(result.checks.map(\.passes) == [20, 20], "\(result.checks)")
            #expect(result.bytesSent > 20 * 20)
        }
    }
}
