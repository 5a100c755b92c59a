import Courier
import CourierSync
import Foundation
import Synchronization

/// Canned HTTP answers for queries: the whole query pipeline (URL building, encoding, retry
/// decisions, decoding, paging) runs; only the network is replaced. GTLR's `testBlock`.
///
/// ```swift
/// let mock = MockTransport()
/// mock.on(.get, path: "/notes/v1/notes/n1") { _ in try .json(["id": "n1", "title": "Hi"]) }
/// var configuration = ServiceActor.Configuration()
/// configuration.testing.handler = mock.handler
/// ```
///
/// Requests without a route get a 404 in Google's error format. Every request is recorded.
public final class MockTransport: Sendable {
    public typealias Responder = @Sendable (HTTPRequest) async throws -> HTTPResponse

    private struct Route {
        let method: HTTPMethod?
        let path: String
        let responder: Responder
    }

    private let state = LockedValue<(routes: [Route], requests: [HTTPRequest])>(([], []))

    public init() {}

    /// Answers requests whose URL path is `path` (and method `method`, if given). Later routes
    /// win over earlier ones for the same request.
    public func on(_ method: HTTPMethod? = nil, path: String, respond: @escaping Responder) {
        state.withLock { $0.routes.append(Route(method: method, path: path, responder: respond)) }
    }

    /// Answers the next requests of a route with `responses` in turn, then repeats the last:
    /// how a test scripts 503, 503, 200.
    public func on(_ method: HTTPMethod? = nil, path: String, sequence responses: [HTTPResponse]) {
        let remaining = LockedValue(responses)
        on(method, path: path) { _ in
            remaining.withLock { list in list.count > 1 ? list.removeFirst() : list[0] }
        }
    }

    /// Every request received, in order.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }

    /// The handler to put in `Configuration.testHandler` or a query's `execution.testHandler`.
    public var handler: TestHandler {
        { [self] request in
            let route = state.withLock { state -> Route? in
                state.requests.append(request)
                return state.routes.last { route in
                    (route.method == nil || route.method == request.method) && route.path == request.url.path
                }
            }
            guard let route else {
                return try .googleError(status: 404, message: "no mock route for \(request.method) \(request.url.path)",
                                        url: request.url)
            }
            return try await route.responder(request)
        }
    }
}

extension HTTPResponse {
    /// A JSON response.
    public static func json(_ value: JSONValue, status: Int = 200, headers: HTTPHeaders = [:],
                            url: URL = URL(string: "http://mock.invalid/")!) throws -> HTTPResponse {
        var headers = headers
        headers["Content-Type"] = "application/json; charset=UTF-8"
        return HTTPResponse(status: status, headers: headers, body: value.serialized(), url: url)
    }

    /// An object's JSON as the response.
    public static func object(_ object: some APIObject, status: Int = 200) throws -> HTTPResponse {
        try json(.object(object.json), status: status)
    }

    /// An error in Google's JSON format.
    public static func googleError(status: Int, message: String, reason: String = "error",
                                   url: URL = URL(string: "http://mock.invalid/")!) throws -> HTTPResponse {
        try json(["error": ["code": .number(JSONNumber(status)), "message": .string(message),
                            "errors": [["domain": "global", "reason": .string(reason), "message": .string(message)]]]],
                 status: status, url: url)
    }
}

extension ServiceActor {
    /// A service whose every query answers `object` (or throws `error`), without a network:
    /// GTLR's `mockServiceWithFakedObject:fakedError:`.
    public static func mock(answering object: (some APIObject)?, error: (any Error)? = nil,
                            configuration: Configuration = Configuration()) throws -> ServiceActor {
        var configuration = configuration
        let json = object.map { JSONValue.object($0.json) }
        configuration.testing.handler = { request in
            if let error { throw error }
            return try .json(json ?? [:], url: request.url)
        }
        return try ServiceActor(configuration: configuration)
    }
}
