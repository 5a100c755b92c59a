import Courier
import CourierTestSupport
import Foundation
import Testing

/// A request's path goes on the wire as the request has it, on every libcurl. libcurl removes dot
/// segments unless told not to (`CURLOPT_PATH_AS_IS`), and from 8.13.0 percent-encoded ones too:
/// a path parameter "..", which Courier encodes as `%2E%2E`, then named the parent resource.
@Suite struct RequestPathTests {
    @Test(arguments: ["/echo/a/../b", "/echo/a/./b", "/echo/a/..", "/echo/a/%2E%2E/b", "/echo/a/%2e/b", "/echo/x/%2E%2E"])
    func dotSegmentsReachTheServer(path: String) async throws {
        try await withServerAndService { server, service in
            let echo = try Echo(try await service.send(HTTPRequest(method: .delete, url: server.url(path))))
            #expect(echo.method == "DELETE")
            #expect(echo.path == path)
        }
    }
}
