import Courier
@testable import CourierLoad
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Checks (`--check`): conditions on each response, counted per check as k6 counts them.
@Suite struct LoadCheckTests {
    static let json = Data(#"{"kind":"tasks#tasks","items":[{"id":"a","done":false},{"id":"b","n":7}],"etag":"x","empty":""}"#.utf8)
    static let headers: HTTPHeaders = {
        var headers = HTTPHeaders()
        headers["Content-Type"] = "application/json; charset=UTF-8"
        headers["ETag"] = "\"v1\""
        return headers
    }()

    static func holds(_ expression: String, status: Int = 200, body: Data = json) throws -> Bool {
        try LoadCheck(expression).passes(status: status, headers: headers, body: body)
    }

    @Test(arguments: [
        ("status==200", true), ("status!=200", false), ("status<400", true), ("status>=500", false), ("status~^2", true),
        ("header:content-type~json", true), ("header:Content-Type~xml", false), ("header:etag", true), ("header:x-missing", false),
        ("header:x-missing!=1", true), ("header:etag==\"v1\"", false), // quotes around a value are the value's delimiters
        ("body~\"tasks#tasks\"", true), ("body!~error", true), ("body~^\\{", true),
        ("json:$.kind==\"tasks#tasks\"", true), ("json:$.kind==tasks#tasks", true), ("json:$.items.length>0", true),
        ("json:$.items.length==2", true), ("json:$.items[0].done==false", true), ("json:$.items[1].n>=7", true),
        ("json:$.items[1].n<7", false), ("json:$[\"etag\"]==x", true), ("json:$.items[5]", false), ("json:$.items", true),
        ("json:$.missing", false), ("json:$.empty==\"\"", true), ("json:$.kind.length==11", true),
    ])
    func evaluates(expression: String, expected: Bool) throws {
        #expect(try Self.holds(expression) == expected, "\(expression)")
    }

    /// The path scanner skips what is off the path without parsing it: strings with brackets,
    /// quotes and escapes, nesting, whitespace; escaped keys are decoded before comparing.
    @Test func theScannerFindsValuesPastTrickyNeighbours() throws {
        let body = Data("""
             { "skip" : ["]}\\\"{[", {"a": [1, {"b": "}"}]}, -1.5e3, true, null] ,
               "caf\\u00e9" : "yes", "obj": {"x": 1, "y": {"z": [ ]}}, "list": [ 10 , 20 ,30 ], "last": "a\\"b" }
            """.utf8)
        for (expression, expected) in [
            ("json:$.café==yes", true), // the key is written \u00e9 in the body
            ("json:$[\"café\"]==yes", true), ("json:$.obj.length==2", true), ("json:$.obj.y.z.length==0", true),
            ("json:$.list[2]==30", true), ("json:$.list[3]", false), ("json:$.list.length==3", true),
            ("json:$.last==a\"b", true), ("json:$.last.length==3", true), ("json:$.skip[2]==-1500", true),
            ("json:$.skip[1].a[1].b==}", true), ("json:$.skip[4]==null", true), ("json:$.skip[3]==true", true),
        ] {
            #expect(try Self.holds(expression, body: body) == expected, "\(expression)")
        }
    }

    @Test func aBodyThatIsNotJSONFailsJSONChecks() throws {
        #expect(try !Self.holds("json:$.kind", body: Data("<html>".utf8)))
        #expect(try Self.holds("json:$.kind!=x", body: Data("<html>".utf8)), "absent is not x")
    }

    /// Every mistake is an error before the run that says what is wrong.
    @Test(arguments: [
        ("latency<5", "expected status, header:NAME, body or json:PATH"),
        ("status", "expected an operator"), ("status=200", "expected an operator"), ("status==ok", "is not a status code"),
        ("status<fast", "compares numbers"), ("header:~json", "expected header:NAME"), ("body~(", "is not a regular expression"),
        ("json:items", "starts at $"), ("json:$.", "followed by no name"), ("json:$[x]", "neither an index nor a quoted name"),
        ("json:$[0", "is not closed"), ("json:$.length.x", ".length ends a JSON path"), ("body~", "the value is empty"),
    ])
    func rejects(expression: String, message: String) {
        do {
            _ = try LoadCheck(expression)
            Issue.record("\(expression) was accepted")
        } catch let error as LoadError {
            #expect(error.message.contains(message), "\(error.message)")
            #expect(error.message.contains(expression))
        } catch {
            Issue.record("\(error)")
        }
    }

    /// Against a server whose every 7th answer is wrong: each check's fails are exactly the wrong
    /// answers it can see, across the command line's checks and a scenario request's own.
    @Test func checksAreCountedExactly() async throws {
        try await withTestServer { server in
            var options = LoadOptions()
            options.scenario = Scenario(requests: [
                .init(name: "list", url: server.url("/sometimes-wrong/checks-\(UUID())?every=7").absoluteString,
                      checks: ["json:$.ok==true", "header:content-type~json", "json:$.items.length>0"]),
            ])
            options.checks = [try LoadCheck("status==200"), try LoadCheck("body~\"ok\":true")]
            options.concurrency = 8
            options.requests = 700
            let result = try await LoadRunner(options: options).run()
            #expect(result.requests == 700 && result.errors == 0)
            #expect(result.checks.map(\.expression) == ["status==200", "body~\"ok\":true", "json:$.ok==true",
                                                         "header:content-type~json", "json:$.items.length>0"])
            let wrong = 700 / 7
            #expect(result.checks[0] == CheckResult(expression: "status==200", passes: 700, fails: 0))
            for check in result.checks.dropFirst() {
                #expect(check.passes == 700 - wrong && check.fails == wrong, "\(check)")
            }
            #expect(abs(result.checkPassRate - (1 - 4.0 * Double(wrong) / 3500)) < 1e-12)
            // Thresholds on pass rates: all checks together, and one by its text.
            #expect(try Threshold("checks>88%").evaluate(result).passed)
            #expect(try !Threshold("checks>99.9%").evaluate(result).passed)
            #expect(try Threshold("check:status==200>=100%").evaluate(result).passed)
            #expect(try !Threshold("check: json:$.ok==true > 90%").evaluate(result).passed)
            #expect(try Threshold("check:json:$.ok==true>85%").evaluate(result).passed)
            let missing = try Threshold("check:status==201>1%").evaluate(result)
            #expect(!missing.passed && missing.display.contains("no check"))
            // A merge adds the counts up by expression.
            let merged = try #require(LoadResult.merged([result, result]))
            #expect(merged.checks[1].fails == 2 * wrong)
            #expect(LoadReport(result).text.contains("FAIL   85.71%  json:$.ok==true  (600 of 700)"))
            #expect(LoadHTMLReport(result).html.contains("<h2>Checks</h2>"))
        }
    }

    /// A request that never got a response fails each of its checks.
    @Test func aTransportFailureFailsItsChecks() async throws {
        var options = LoadOptions()
        options.url = URL(string: "http://127.0.0.1:9/")!
        options.checks = [try LoadCheck("status==200")]
        options.requests = 3
        options.concurrency = 1
        options.timeout = .seconds(5)
        let result = try await LoadRunner(options: options).run()
        #expect(result.errors == 3)
        #expect(result.checks == [CheckResult(expression: "status==200", passes: 0, fails: 3)])
    }

    @Test func checkThresholdsAreParsed() throws {
        #expect(try Threshold("checks>99.9%").metric == .checkPassRate(nil))
        #expect(try Threshold("check:status>=200>99%").metric == .checkPassRate("status>=200"))
        #expect(try Threshold("check:status<400<=1%").limit == 0.01)
        for bad in ["checks>2", "check:status==200", "check:nonsense>1%", "checks>101%"] {
            #expect(throws: LoadError.self, "\(bad)") { try Threshold(bad) }
        }
    }
}
