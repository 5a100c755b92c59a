@testable import Courier
import CourierTestServer
import Foundation
import CourierTestSupport
import Testing

@Suite struct APIErrorTests {
    @Test func googleV1ErrorsAreParsedAndMatchable() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                do {
                    _ = try await service.execute(Notes.get("missing"))
                    Issue.record("expected a 404")
                } catch APIError.notFound {
                    // the seeds' per-status handler
                }
                let error = await #expect(throws: APIError.self) { try await service.execute(Notes.get("missing")) }
                #expect(error?.status == 404)
                #expect(error?.message == "Note not found: missing")
                #expect(error?.reason == "notFound")
                #expect(error?.items.first?.domain == "global")
                #expect(error?.statusName == "NOT_FOUND")
                #expect(error?.requestID?.hasPrefix("courier-") == true)
            }
        }
    }

    @Test func googleV2ErrorsCarryDetails() async throws {
        try await withTestServer { server in
            try await withCheckedService(configuration: .testing(server.baseURL)) { service in
                let error = await #expect(throws: APIError.self) { try await service.execute(Notes.raw("errors/v2")) }
                #expect(error?.status == 403)
                #expect(error?.statusName == "PERMISSION_DENIED")
                #expect(error?.details.first?["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
                #expect(error?.details.first?["reason"] == "ACCESS_DENIED")
                do { _ = try await service.execute(Notes.raw("errors/v2")) } catch APIError.forbidden {} catch { Issue.record("\(error)") }
            }
        }
    }

    @Test func nonJSONErrorBodiesKeepStatusAndText() async throws {
        try await withTestServer { server in
            var configuration = ServiceActor.Configuration.testing(server.baseURL)
            configuration.retry = .disabled
            try await withCheckedService(configuration: configuration) { service in
                let error = await #expect(throws: APIError.self) { try await service.execute(Notes.raw("errors/text")) }
                #expect(error?.status == 502)
                #expect(error?.message.contains("Bad gateway from the proxy") == true)
                do { _ = try await service.execute(Notes.raw("errors/text")) } catch APIError.serverError {} catch { Issue.record("\(error)") }
            }
        }
    }

    @Test func longTextBodiesAreTruncated() {
        let response = HTTPResponse(status: 500, body: Data(String(repeating: "x", count: 5000).utf8), url: URL(string: "http://h/")!)
        #expect(APIError(response: response).message.count == 1024)
        // Cut inside a character: still text.
        let snowmen = HTTPResponse(status: 500, body: Data(String(repeating: "\u{2603}", count: 2000).utf8), url: URL(string: "http://h/")!)
        #expect(APIError(response: snowmen).message.hasPrefix("\u{2603}\u{2603}"))
    }

    /// A server's text reaches logs and terminals on one line, without its control characters
    /// (a forged log line, a terminal escape); bytes that are not text are named, not shown.
    /// Before, both came through as sent (a download's 206 error once held the object's bytes).
    @Test func bodyTextIsOneLineAndBinaryIsNamed() throws {
        let url = try #require(URL(string: "http://h/"))
        let forged = HTTPResponse(status: 502, body: Data("Bad gateway\r\n2026-12-01 level=info msg=\"all good\"\u{1B}[2J\u{85}".utf8), url: url)
        let message = APIError(response: forged).message
        #expect(message == "Bad gateway  2026-12-01 level=info msg=\"all good\" [2J")
        #expect(!message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })

        let binary = HTTPResponse(status: 206, headers: ["Content-Type": "application/octet-stream"],
                                  body: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) }), url: url)
        #expect(APIError(response: binary).message == "HTTP 206 (4096 bytes of application/octet-stream, not text)")
        let latin1 = HTTPResponse(status: 500, body: Data((0..<200).map { _ in UInt8(0xE9) }), url: url)
        #expect(APIError(response: latin1).message == "Internal Server Error (200 bytes, not text)")
    }
}
