@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Discovery's `dataWrapper` feature, which the Cloud Translation API v2 has: bodies travel as
/// `{"data": …}` both ways, as google-api-python-client sends and reads them. Before, Courier
/// sent the bare body and decoded the wrapper, so every field of a typed answer read as absent.
@Suite struct DataWrapperTests {
    static func query(_ server: TestServer, wrapped: Bool, body: JSONValue?) -> Query<GenericObject> {
        let api = APIDescription(name: "translate", version: "v2", rootURL: server.baseURL, servicePath: "", dataWrapper: wrapped)
        var query = Query<GenericObject>(api: api, name: "translate.translations.translate", method: body == nil ? .get : .post,
                                         path: "data-echo")
        query.body = body
        return query
    }

    @Test func theBodyGoesInsideDataAndTheAnswerComesOutOfIt() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let answer = try await service.execute(Self.query(server, wrapped: true, body: ["q": "Hello", "target": "de"]))
                #expect(answer.json["received"] == ["data": ["q": "Hello", "target": "de"]], "sent wrapped, read unwrapped")

                let already = try await service.execute(Self.query(server, wrapped: true, body: ["data": ["q": "Hi"]]))
                #expect(already.json["received"] == ["data": ["q": "Hi"]], "a body with `data` already is not wrapped again")

                let bare = try await service.execute(Self.query(server, wrapped: false, body: ["q": "Hello"]))
                #expect(bare.json["data"]?["received"] == ["q": "Hello"], "without the feature, nothing changes")

                let array = try await service.execute(Self.query(server, wrapped: true, body: [1, 2]))
                #expect(array.json["received"] == [1, 2], "only an object is wrapped, as the Python client does")

                let noBody = try await service.execute(Self.query(server, wrapped: true, body: nil))
                #expect(noBody.json["received"] == .null)
            }
        }
    }

    @Test func anAnswerWithoutDataIsReadAsItIs() {
        let api = APIDescription(name: "translate", version: "v2", rootURL: URL(string: "https://example.com/")!, servicePath: "", dataWrapper: true)
        let url = URL(string: "https://example.com/x")!
        let plain = HTTPResponse(status: 200, body: Data(#"{"error":"x"}"#.utf8), url: url)
        #expect(api.unwrapped(plain).body == plain.body)
        let notJSON = HTTPResponse(status: 200, body: Data("not json".utf8), url: url)
        #expect(api.unwrapped(notJSON).body == notJSON.body)
        let array = HTTPResponse(status: 200, body: Data(#"[1]"#.utf8), url: url)
        #expect(api.unwrapped(array).body == array.body)
    }
}
