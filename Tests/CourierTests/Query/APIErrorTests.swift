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
    }
}
