@testable import CourierGenerator
import Foundation
import CourierTestSupport
import Testing

@Suite struct GeneratorTests {
    static let repository = Repository.root

    static func generate(_ document: String, module: String) throws -> GeneratedModule {
        try Generator.generate(discovery: try Data(contentsOf: repository.appendingPathComponent(document)), moduleName: module)
    }

    /// The fixture's output is compared as text with the expected files, which the test build also compiles (GoldenNotes).
    @Test func goldenFilesMatch() throws {
        let module = try Self.generate("Tests/Golden/notes.discovery.json", module: "GoldenNotes")
        #expect(module.files.map(\.name) == ["Notes.swift", "Notes+Queries.swift", "Notes+Schemas.swift"])
        for file in module.files {
            let expected = try String(contentsOf: Self.repository.appendingPathComponent("Tests/Golden/GoldenNotes/\(file.name)"), encoding: .utf8)
            #expect(file.contents == expected, "\(file.name) differs from the golden file: regenerate with `make generate` and review the diff")
        }
    }

    /// The committed clients are what the generator makes of their committed documents (`make generate`).
    @Test(arguments: [("Sources/GoogleStorage", "GoogleStorage"), ("Sources/GoogleTasks", "GoogleTasks")])
    func committedClientsAreUpToDate(folder: String, module: String) throws {
        let generated = try Self.generate("\(folder)/discovery.json", module: module)
        for file in generated.files {
            let committed = try String(contentsOf: Self.repository.appendingPathComponent("\(folder)/\(file.name)"), encoding: .utf8)
            #expect(file.contents == committed, "\(folder)/\(file.name) is stale: run `make generate`")
        }
    }

    /// `--module` defaults to the output folder's name, else to Google<Name> from the document.
    @Test func theModuleNameDefaultsFromTheFolderOrTheDocument() throws {
        let storage = try Data(contentsOf: Self.repository.appendingPathComponent("Sources/GoogleStorage/discovery.json"))
        #expect(try Generator.defaultModuleName(discovery: storage, outputFolder: nil) == "GoogleStorage")
        #expect(try Generator.defaultModuleName(discovery: storage, outputFolder: "Sources/MyStorage") == "MyStorage")
        #expect(try Generator.defaultModuleName(discovery: storage, outputFolder: "Sources/my-storage/") == "GoogleStorage")
        let tasks = try Data(contentsOf: Self.repository.appendingPathComponent("Sources/GoogleTasks/discovery.json"))
        #expect(try Generator.defaultModuleName(discovery: tasks, outputFolder: nil) == "GoogleTasks")
        #expect(throws: GeneratorError.self) { try Generator.defaultModuleName(discovery: Data("{}".utf8), outputFolder: nil) }
    }

    /// google-api-python-client builds its test clients from `zoo.json`, which takes liberties
    /// no published document takes. Before, the generator refused it ("missing rootUrl"); with
    /// that fixed, it still left out both uploads (no `supportsMediaUpload`) and the `dataWrapper`
    /// feature, which the Cloud Translation API v2 has too (its answers arrive inside `"data"`).
    @Test func googleAPIPythonClientsZooDocument() throws {
        let module = try Self.generate("Tests/Conformance/google-api-python-client/zoo.json", module: "Zoo")
        let all = module.files.map(\.contents).joined(separator: "\n")
        // A base path alone is relative to www.googleapis.com, where such documents were served.
        #expect(all.contains(#"rootURL: URL(string: "https://www.googleapis.com/")!"#))
        #expect(all.contains(#"servicePath: "zoo/", batchPath: "batch", dataWrapper: true"#))
        // `mediaUpload` makes a method an upload, as the Python client reads it; "1KB" is 1,024 bytes.
        #expect(all.contains(#"MediaUploadLimits(accept: ["image/png"], maxSize: 1024)"#))
        #expect(all.contains(#"query.uploadPath = "upload/activities/{userId}/@self""#))
        // A parameter without a type, or of type `any`, takes any JSON value; `object`, a JSON object.
        #expect(all.contains("public var maxResults: JSONValue?"))
        #expect(all.contains("public var a: JSONValue?") && all.contains("public var o: JSONObject?"))
        // Two methods with one `id` (`zoo.animals.mine`) each get a query type of their own.
        #expect(all.contains("public struct ListQuery") && all.contains("public struct AssertQuery"))
    }

    @Test func aBaseURLAloneGivesTheRootAndThePath() throws {
        #expect(DiscoveryDocument.split(baseUrl: "https://www.googleapis.com/buzz/v1/") ?? ("", "") == ("https://www.googleapis.com/", "buzz/v1/"))
        #expect(DiscoveryDocument.split(baseUrl: "http://localhost:8080/api/") ?? ("", "") == ("http://localhost:8080/", "api/"))
        #expect(DiscoveryDocument.split(baseUrl: "ftp://example.com/x/") == nil)
        #expect(DiscoveryDocument.split(baseUrl: "/relative/") == nil)
        let document = try DiscoveryDocument.parse(Data(#"{"name": "buzz", "version": "v1", "baseUrl": "https://www.googleapis.com/buzz/v1/"}"#.utf8))
        #expect(document.rootUrl == "https://www.googleapis.com/" && document.servicePath == "buzz/v1/")
        #expect(throws: GeneratorError.self) { try DiscoveryDocument.parse(Data(#"{"name": "x", "version": "v1"}"#.utf8)) }
    }

    @Test func generatingIsDeterministic() throws {
        let first = try Self.generate("Sources/GoogleStorage/discovery.json", module: "GoogleStorage")
        let second = try Self.generate("Sources/GoogleStorage/discovery.json", module: "GoogleStorage")
        #expect(first == second)
    }

    /// Every document in ../shared/discovery (when present) translates; `make generated-check` also compiles them.
    @Test func everySharedDocumentGenerates() throws {
        let folder = Self.repository.deletingLastPathComponent().appendingPathComponent("shared/discovery")
        let documents = (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter { $0.hasSuffix(".json") } ?? []
        for document in documents.sorted() {
            let data = try Data(contentsOf: folder.appendingPathComponent(document))
            let module = try Generator.generate(discovery: data, moduleName: "Generated")
            #expect(module.lineCount > 100, "\(document)")
        }
    }

    @Test(arguments: [
        ("max-results", "maxResults"), ("2fa", "_2fa"), ("email.address", "emailAddress"), ("@type", "type"),
        ("STORAGE_CLASS_UNSPECIFIED", "storageClassUnspecified"), ("selfLink", "selfLink"), ("ID", "id"),
        ("URLMap", "urlMap"), ("x-goog-meta", "xGoogMeta"), ("", "_"),
    ])
    func lowerCamel(name: String, expected: String) {
        #expect(Names.lowerCamel(name) == expected)
    }

    @Test func keywordsAreEscapedAndCollisionsNumbered() {
        #expect(Names.escaped("import") == "`import`")
        #expect(Names.escaped("default") == "`default`")
        #expect(Names.escaped("title") == "title")
        #expect(Names.unique(["a", "a", "b", "a"]) == ["a", "a2", "b", "a3"])
        #expect(Names.unique(["json"], avoiding: ["json"]) == ["json2"])
        #expect(Names.upperCamel("bucket-access_control") == "BucketAccessControl")
    }

    @Test func badDocumentsAreTypedErrors() {
        #expect(throws: GeneratorError.self) { try Generator.generate(discovery: Data("{}".utf8), moduleName: "X") }
        #expect(throws: GeneratorError.self) { try Generator.generate(discovery: Data("not json".utf8), moduleName: "X") }
        let dangling = #"{"name":"x","version":"v1","rootUrl":"https://x/","servicePath":"","schemas":{"A":{"id":"A","type":"object","properties":{"b":{"$ref":"Missing"}}}}}"#
        #expect(throws: GeneratorError.unresolvedReference("Missing")) {
            try Generator.generate(discovery: Data(dangling.utf8), moduleName: "X")
        }
    }

    @Test func stringLiteralsAreEscaped() {
        #expect(CodeWriter.literal("a\"b\\c\nd\u{1}") == #""a\"b\\c\nd\u{1}""#)
    }
}
