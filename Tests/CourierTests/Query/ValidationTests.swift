@testable import Courier
import Foundation
import CourierTestSupport
import Testing

@Suite struct ValidationTests {
    @Test(arguments: ["X-Bad\r\nInjected: 1", "Bad Name", "", "X-Nul\u{0}"])
    func invalidHeaderNamesAreRejectedBeforeSending(name: String) async throws {
        try await withCheckedService(configuration: .suite()) { service in
            var request = HTTPRequest(url: URL(string: "http://127.0.0.1:1/")!)
            request.headers.add(name: name, value: "v")
            await #expect(throws: TransportError.invalidRequest) { try await service.send(request) }
            #expect(await service.stats.completedTransfers == 0)
        }
    }

    @Test(arguments: ["a\r\nInjected: yes", "line\nbreak", "nul\u{0}byte", "carriage\rreturn"])
    func headerValuesWithCRLFOrNULAreRejected(value: String) async throws {
        try await withCheckedService(configuration: .suite()) { service in
            var request = HTTPRequest(url: URL(string: "http://127.0.0.1:1/")!)
            request.headers["X-Test"] = value
            await #expect(throws: TransportError.invalidRequest) { try await service.send(request) }
        }
    }

    @Test func nonHTTPSchemesAndBadMethodsAreRejected() async throws {
        try await withCheckedService(configuration: .suite()) { service in
            await #expect(throws: TransportError.invalidRequest) {
                try await service.send(HTTPRequest(url: URL(string: "file:///etc/passwd")!))
            }
            await #expect(throws: TransportError.invalidRequest) {
                try await service.send(HTTPRequest(method: HTTPMethod(rawValue: "GET /x"), url: URL(string: "http://127.0.0.1/")!))
            }
        }
    }

    @Test func headersAreCaseInsensitiveAndOrdered() {
        var headers: HTTPHeaders = ["Accept": "a", "X-Multi": "1"]
        headers.add(name: "x-multi", value: "2")
        #expect(headers["accept"] == "a")
        #expect(headers.values(for: "X-MULTI") == ["1", "2"])
        headers["X-Multi"] = "3"
        #expect(headers.values(for: "x-multi") == ["3"])
        headers["accept"] = nil
        #expect(!headers.contains("Accept"))
    }

    @Test func redactionSnipsCredentialsInURLsAndHeaders() {
        #expect(Redaction.url("https://h/p?key=s3kr1t&alt=json&access_token=T0K") == "https://h/p?key=_snip_&alt=json&access_token=_snip_")
        #expect(Redaction.url("https://user:pw@h/p") == "https://_snip_@h/p")
        // A resumable session URI is a credential by itself.
        #expect(Redaction.url("https://h/upload?uploadType=resumable&upload_id=AEnB2U") == "https://h/upload?uploadType=resumable&upload_id=_snip_")
        #expect(Redaction.url("https://h/p#frag") == "https://h/p#frag")
        #expect(Redaction.headerValue(name: "Authorization", value: "Bearer abc") == "Bearer _snip_")
        #expect(Redaction.headerValue(name: "X-Goog-Api-Key", value: "abc") == "_snip_")
        let error = TransportError(.timedOut, url: "https://h/?key=s3kr1t")
        #expect(!"\(error)".contains("s3kr1t"))
        let headers: HTTPHeaders = ["Authorization": "Bearer s3kr1t"]
        #expect(!headers.description.contains("s3kr1t"))
    }
}
