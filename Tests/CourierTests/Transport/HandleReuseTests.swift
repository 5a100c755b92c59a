@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// No option leaks from one request into the next on a reused easy handle (libcurl 8.1.0 and
/// later, and before 7.84.0; ``Libcurl/handlesAreReusable``). A plain GET's options stay on its
/// handle (``Transfer/ReuseProfile``); every other request resets the handle when it goes back.
///
/// Every ordered pair of request kinds runs on one service, the second after the first on the
/// same handle, and what the second sent (as the server saw it at `/echo`) and received (a body
/// always gzip-compressed, at `/gzip`) must equal what it sends and receives alone, on a service
/// of its own. On a libcurl that does not reuse handles the pairs pass trivially; `make test`
/// runs the suite on Debian's newest libcurl too, which does.
@Suite struct HandleReuseTests {
    enum Kind: String, CaseIterable, Sendable {
        case get, getWithHeaders, getNeverIdempotent, stream, download, getToFile, head, post, emptyPost, put, patch, delete

        func request(_ url: URL) -> HTTPRequest {
            let body = HTTPRequest.Body.data(Data("{\"kind\":\"\(rawValue)\"}".utf8))
            switch self {
            case .get, .stream, .download, .getToFile: return HTTPRequest(url: url)
            case .getWithHeaders:
                var request = HTTPRequest(url: url)
                request.headers["X-Kind"] = rawValue
                return request
            case .getNeverIdempotent:
                var request = HTTPRequest(url: url)
                request.idempotency = .never
                return request
            case .head: return HTTPRequest(method: .head, url: url)
            case .post: return HTTPRequest(method: .post, url: url, body: body)
            case .emptyPost: return HTTPRequest(method: .post, url: url)
            case .put: return HTTPRequest(method: .put, url: url, body: body)
            case .patch: return HTTPRequest(method: .patch, url: url, body: body)
            case .delete: return HTTPRequest(method: .delete, url: url)
            }
        }

        /// What the request sent and received, in a form two runs can compare.
        func run(_ service: ServiceActor, _ url: URL, file: URL) async throws -> String {
            let request = request(url)
            let status: Int
            let body: Data
            switch self {
            case .download:
                let options = DownloadOptions(resume: false, verifyIntegrity: false, slicing: nil, contentDecoding: .stored)
                status = try await service.downloadFile(request, to: file, options: options).head.status
                body = try Data(contentsOf: file)
            case .getToFile:
                status = try await service.send(request, writingBodyTo: file).status
                body = try Data(contentsOf: file)
            case .stream:
                let response = try await service.stream(request)
                status = response.status
                var collected = Data()
                for try await chunk in response.body { collected.append(chunk) }
                body = collected
            default:
                let response = try await service.send(request)
                status = response.status
                body = response.body
            }
            return "\(status) " + HandleReuseTests.describe(body)
        }
    }

    /// An echo without the one header that names the connection's far end; any other body by its hash.
    static func describe(_ body: Data) -> String {
        guard let echo = try? JSONDecoder().decode(Echo.self, from: body) else {
            return "\(body.count) bytes, \(TestPattern.Hasher.of(body).hex)"
        }
        let headers = echo.headers.map { "\($0[0].lowercased()): \($0[1])" }.sorted()
        return "\(echo.method) \(echo.path)?\(echo.query) [\(headers.joined(separator: ", "))] \(echo.bodyLength) bytes, \(echo.bodyHash)"
    }

    static let paths = ["/echo", "/gzip"]

    @Test func noRequestInheritsTheOptionsOfTheOneBefore() async throws {
        try await withTestServer { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-reuse-\(UUID())")
            defer {
                try? FileManager.default.removeItem(at: file)
                PartialDownload.remove(for: file)
            }
            // Each kind alone, on a service of its own: a handle that served nothing before.
            var alone: [String: String] = [:]
            for kind in Kind.allCases {
                for path in Self.paths {
                    alone["\(kind) \(path)"] = try await withCheckedService(configuration: .suite()) { service in
                        try await kind.run(service, server.url(path), file: file)
                    }
                }
            }
            try await withCheckedService(configuration: .suite()) { service in
                for first in Kind.allCases {
                    for second in Kind.allCases {
                        for path in Self.paths {
                            _ = try await first.run(service, server.url(path), file: file)
                            let after = try await second.run(service, server.url(path), file: file)
                            #expect(after == alone["\(second) \(path)"], "\(second) after \(first), \(path)")
                        }
                    }
                }
                let stats = await service.stats
                if Libcurl.handlesAreReusable {
                    #expect(stats.easyHandles == 1, "one handle served every request: \(stats)")
                    #expect(stats.handleReuses == Kind.allCases.count * Kind.allCases.count * Self.paths.count * 2 - 1)
                }
            }
        }
    }
}
