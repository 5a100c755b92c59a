@testable import Courier
import Foundation
import Testing

/// RFC 6570 against the RFC's shared test suite (Tests/Conformance/uritemplate-test, pinned,
/// Apache-2.0), as data: every example of the RFC, the suite's extended cases, and its invalid
/// templates, each of which must fail.
@Suite struct URITemplateConformanceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let file: String
        let group: String
        let template: String
        let variables: [String: URITemplate.Value]
        /// The acceptable expansions; empty when the template must fail.
        let expected: [String]
        var testDescription: String { "\(file) · \(group) · \(template)" }
    }

    static let files = ["spec-examples.json", "spec-examples-by-section.json", "extended-tests.json", "negative-tests.json"]

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Conformance/uritemplate-test")

    /// Every case of every file; JSONValue keeps an object's members in the file's order, which
    /// the cases with one expected expansion of an associative array rely on.
    static let cases: [Case] = files.flatMap { file -> [Case] in
        guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(file).path),
              let groups = try? JSONValue(parsing: data).objectValue else { return [] }
        return groups.flatMap { group, body -> [Case] in
            let variables = (body["variables"]?.objectValue ?? [:]).reduce(into: [String: URITemplate.Value]()) { result, member in
                if !member.value.isNull { result[member.key] = value(member.value) } // null: undefined
            }
            return (body["testcases"]?.arrayValue ?? []).compactMap { test -> Case? in
                guard let pair = test.arrayValue, pair.count == 2, let template = pair[0].stringValue else { return nil }
                let expected: [String] = switch pair[1] {
                case .string(let one): [one]
                case .array(let any): any.compactMap(\.stringValue)
                default: [] // false: the template is invalid
                }
                return Case(file: file, group: group, template: template, variables: variables, expected: expected)
            }
        }
    }

    /// A JSON value as the suite means it: numbers by their JSON text.
    static func value(_ json: JSONValue) -> URITemplate.Value {
        switch json {
        case .string(let text): .string(text)
        case .number(let number): .string(number.description)
        case .array(let items): .list(items.map { $0.stringValue ?? $0.numberValue?.description ?? "" })
        case .object(let object): .pairs(object.map { URITemplate.Value.Pair(name: $0.key, value: $0.value.stringValue ?? "") })
        default: .string("")
        }
    }

    @Test func theSuiteIsAllThere() {
        // 64 + 117 + 53 + 36 cases in the pinned files: a parse that lost some would pass fewer.
        #expect(Self.cases.count == 270)
        #expect(Self.cases.filter(\.expected.isEmpty).count == 36) // negative-tests.json
    }

    @Test(arguments: cases)
    func expansion(_ test: Case) {
        let template = URITemplate(test.template)
        do throws(QueryError) {
            let expanded = try template.expand(test.variables)
            #expect(!test.expected.isEmpty, "an invalid template expanded to \(expanded)")
            #expect(test.expected.contains(expanded), "expected one of \(test.expected)")
        } catch {
            #expect(test.expected.isEmpty, "failed: \(error)")
            #expect(error == .invalidTemplate)
        }
    }
}

@Suite struct URITemplateTests {
    let variables = ["var": "value", "hello": "Hello World!", "path": "/foo/bar", "x": "1024", "y": "768", "empty": ""]

    @Test(arguments: [
        ("{var}", "value"), ("{hello}", "Hello%20World%21"), ("{+hello}", "Hello%20World!"), ("{+path}/here", "/foo/bar/here"),
        ("here?ref={+path}", "here?ref=/foo/bar"), ("X{#var}", "X#value"), ("{x,y}", "1024,768"), ("{+x,hello,y}", "1024,Hello%20World!,768"),
        ("X{.var}", "X.value"), ("X{.x,y}", "X.1024.768"), ("{/var}", "/value"), ("{/var,x}/here", "/value/1024/here"),
        ("{;x,y}", ";x=1024;y=768"), ("{;x,y,empty}", ";x=1024;y=768;empty"), ("{?x,y}", "?x=1024&y=768"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="), ("?fixed=yes{&x}", "?fixed=yes&x=1024"), ("{undefined}", ""), ("{?undefined}", ""),
    ])
    func rfc6570Examples(template: String, expected: String) throws {
        #expect(try URITemplate(template).expand(variables) == expected)
    }

    @Test(arguments: [
        ("../x", "..%2Fx"), ("a/b", "a%2Fb"), ("..", "%2E%2E"), (".", "%2E"), ("%2F", "%252F"), ("a b?c#d", "a%20b%3Fc%23d"),
        ("ü", "%C3%BC"), ("a&b=c", "a%26b%3Dc"),
    ])
    func hostileValuesStayInTheirSegment(value: String, encoded: String) throws {
        #expect(try URITemplate("notes/{id}/x").expand(["id": value]) == "notes/\(encoded)/x")
    }

    @Test func reservedExpansionKeepsSlashesButNotDotSegments() throws {
        #expect(try URITemplate("o/{+name}").expand(["name": "dir/file.txt"]) == "o/dir/file.txt")
        #expect(try URITemplate("o/{+name}").expand(["name": "../../admin"]) == "o/%2E%2E/%2E%2E/admin")
        #expect(try URITemplate("o/{+name}").expand(["name": "a%2Fb c"]) == "o/a%2Fb%20c")
    }

    @Test func dotSegmentsStayEncodedInListsAndPrefixes() throws {
        #expect(try URITemplate("{/segments*}").expand(["segments": ["a", "..", "b"]]) == "/a/%2E%2E/b")
        #expect(try URITemplate("{/segments}").expand(["segments": ["..", "."]]) == "/..,.") // one segment, not a dot segment
        #expect(try URITemplate("a/{.var}").expand(["var": "."]) == "a/%2E%2E") // the operator's dot and the value's
        #expect(try URITemplate("../{var}").expand(["var": "x"]) == "../x") // the template's own dot segment is its author's
        #expect(try URITemplate("{+path}?q={+path}").expand(["path": ".."]) == "%2E%2E?q=..") // past the path, no segments
        #expect(try URITemplate("x/{id:2}").expand(["id": "..."]) == "x/%2E%2E")
    }

    @Test func missingPathParameterIsATypedError() {
        #expect(throws: QueryError.missingParameter) { try URITemplate("notes/{id}").expand([:], requireAll: true) }
        // An empty list or associative array is undefined (RFC 6570 section 2.3): a path still needs it.
        #expect(throws: QueryError.missingParameter) { try URITemplate("notes{/ids*}").expand(["ids": []], requireAll: true) }
        #expect(throws: QueryError.missingParameter) { try URITemplate("notes{?filter*}").expand(["filter": [:]], requireAll: true) }
    }

    @Test func anInvalidTemplateIsATypedErrorNamingWhereItBreaks() throws {
        let template = URITemplate("v1/{name")
        #expect(template.variableNames.isEmpty)
        #expect(template.description == "v1/{name")
        do throws(QueryError) {
            _ = try template.expand(["name": "x"])
            Issue.record("an unclosed expression expanded")
        } catch {
            #expect(error == .invalidTemplate)
            #expect(error.message.contains("closing \"}\""))
            #expect(error.message.contains("offset 8"))
        }
        #expect(throws: QueryError.invalidTemplate) { try URITemplate(validating: "a b/{id}") }
        #expect(throws: QueryError.invalidTemplate) { try URITemplate(validating: "{!id}") }
        #expect(throws: QueryError.invalidTemplate) { try URITemplate(validating: "50%/{id}") }
        #expect(try URITemplate(validating: "v1/{+name}:cancel{?x*}").variableNames == ["name", "x"])
    }

    @Test func aPrefixOnAListIsATypedError() {
        #expect(throws: QueryError.invalidTemplate) { try URITemplate("{list:2}").expand(["list": ["a", "b"]]) }
    }

    @Test func literalsAreEncodedAsTheRFCSays() throws {
        #expect(try URITemplate("café/{var}").expand(variables) == "caf%C3%A9/value")
        #expect(try URITemplate("x%20y/{var}").expand(variables) == "x%20y/value")
    }

    @Test func associativeArraysFromADictionaryAreInNameOrder() throws {
        let filter = URITemplate.Value(["z": "1", "a": "2", "m": ""])
        #expect(try URITemplate("/n{?filter*}").expand(["filter": filter]) == "/n?a=2&m=&z=1")
        #expect(try URITemplate("/n{;filter*}").expand(["filter": filter]) == "/n;a=2;m;z=1")
        #expect(try URITemplate("/n{?filter}").expand(["filter": filter]) == "/n?filter=a,2,m,,z,1")
    }

    @Test func theDocumentedExamplesHold() throws {
        // URITemplate's and URITemplate.Value's doc comments.
        let items: URITemplate = "v1/{+name}/items{?pageSize,fields*}"
        #expect(try items.expand(["name": "projects/p1", "pageSize": "10", "fields": ["id", "title"]])
            == "v1/projects/p1/items?pageSize=10&fields=id&fields=title")
        let search: URITemplate = "/search{?q,lang*}{&filter*}"
        #expect(try search.expand(["q": "uri templates", "lang": ["en", "fr"], "filter": ["kind": "note"]])
            == "/search?q=uri%20templates&lang=en&lang=fr&kind=note")
    }
}
