import Courier
import Foundation
import FuzzDriver

// What servers send: up to four responses, separated by a line `~~~`, each a status line (its
// digits), `Name: value` header lines, an empty line and the body. The service's test handler
// answers its n-th request with response n (the last again after that), so every operation meets
// them through the whole pipeline: retries and `Retry-After`, error bodies, typed decoding,
// resumable uploads' 308s and session URLs, downloads' sizes, ranges and hashes, a token
// endpoint's JSON, a wire batch's multipart. The first byte picks the operation. Each must
// return or throw a typed error: nothing may trap, and nothing may hang (`-timeout`).

struct Served {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
}

func responses(_ bytes: Data) -> [Served] {
    var pieces: [Data] = []
    var rest = bytes[...]
    let separator = Data("\n~~~\n".utf8)
    while pieces.count < 3, let range = rest.range(of: separator) {
        pieces.append(Data(rest[..<range.lowerBound]))
        rest = rest[range.upperBound...]
    }
    pieces.append(Data(rest))
    return pieces.map { piece in
        let split = piece.range(of: Data("\n\n".utf8))
        let head = String(decoding: split.map { piece[..<$0.lowerBound] } ?? piece[...], as: UTF8.self)
        let body = split.map { Data(piece[$0.upperBound...]) } ?? Data()
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // A status as curl reports one: three digits.
        let status = (Int(lines.isEmpty ? "" : lines.removeFirst().prefix(3)) ?? 200) % 1000
        var headers = HTTPHeaders()
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            headers.add(name: String(parts[0]), value: parts.count > 1 ? String(parts[1].drop { $0 == " " }) : "")
        }
        return Served(status: status, headers: headers, body: body)
    }
}

/// The responses of the input being run, and how many requests it has answered.
final class Script: @unchecked Sendable {
    private let lock = NSLock()
    private var served: [Served] = []
    private var answered = 0

    func load(_ served: [Served]) {
        lock.withLock { (self.served, answered) = (served, 0) }
    }

    func next(for request: HTTPRequest) -> HTTPResponse {
        let response = lock.withLock { () -> Served in
            defer { answered += 1 }
            return served[min(answered, served.count - 1)]
        }
        return HTTPResponse(status: response.status, headers: response.headers, body: response.body, url: request.url)
    }
}

let script = Script()

/// A new refresh-token authorizer for each input, so every input's token endpoint is asked (an
/// authorizer keeps the token it got).
final class FreshAuthorizer: Authorizer, @unchecked Sendable {
    private let lock = NSLock()
    private var current: OAuth2RefreshTokenAuthorizer?

    func renew() {
        let next = try? OAuth2RefreshTokenAuthorizer(clientID: "c", clientSecret: "s", refreshToken: "r",
                                                     tokenURL: URL(string: "https://fuzz.example/token")!)
        lock.withLock { current = next }
    }

    private var inner: OAuth2RefreshTokenAuthorizer? { lock.withLock { current } }

    func authorize(_ request: inout HTTPRequest) async throws { try await inner?.authorize(&request) }

    func authorize(_ request: inout HTTPRequest, context: AuthorizationContext) async throws {
        try await inner?.authorize(&request, context: context)
    }

    func invalidate(_ rejected: HTTPRequest) async { await inner?.invalidate(rejected) }
}

let freshAuthorizer = FreshAuthorizer()

/// The services, made once; retries wait at most a millisecond. The second authorizes its queries.
let service = makeService(authorized: false)
let authorizedService = makeService(authorized: true)

func makeService(authorized: Bool) -> ServiceActor {
    var configuration = ServiceActor.Configuration()
    if authorized { configuration.auth.authorizer = freshAuthorizer }
    configuration.testing.handler = { request in script.next(for: request) }
    configuration.retry.maxRetries = 3
    configuration.retry.initialDelay = 0...0.001
    configuration.retry.maxDelay = .milliseconds(1)
    configuration.retry.deadline = .seconds(5)
    return try! ServiceActor(configuration: configuration)
}

let api = APIDescription(name: "fuzz", version: "v1", rootURL: URL(string: "https://fuzz.example/")!, servicePath: "fuzz/v1/",
                         batchPath: "batch/fuzz/v1")
let downloadFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fuzz-download-\(getpid())")


@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let operation = start[0] % 6
    script.load(responses(Data(UnsafeBufferPointer(start: start + 1, count: count - 1))))
    runToCompletion {
        switch operation {
        case 0: // a plain request: statuses, retries, Retry-After
            _ = try? await service.send(HTTPRequest(url: URL(string: "https://fuzz.example/fuzz/v1/plain")!))
        case 1: // a typed query: JSON, Google's error bodies
            _ = try? await service.execute(Query<GenericObject>(api: api, name: "fuzz.get", path: "things/{id}",
                                                                pathParameters: ["id": "1"]))
        case 2: // a download to a file: sizes, ranges, hashes, resumption
            _ = try? await service.downloadFile(HTTPRequest(url: URL(string: "https://fuzz.example/download/x")!), to: downloadFile)
            try? FileManager.default.removeItem(at: downloadFile)
        case 3: // a resumable upload in three chunks: the session URL, 308s and their ranges
            var query = Query<GenericObject>(api: api, name: "fuzz.insert", method: .post, path: "things")
            query.uploadPath = "/upload/fuzz/v1/things"
            query.upload = UploadParameters(data: Data(repeating: 7, count: 600 << 10), mimeType: "application/octet-stream")
            query.upload?.chunkSize = 256 << 10
            _ = try? await service.execute(query)
        case 4: // a token endpoint's answer, then the request it authorizes
            freshAuthorizer.renew()
            _ = try? await authorizedService.execute(Query<GenericObject>(api: api, name: "fuzz.get", path: "things/{id}",
                                                                          pathParameters: ["id": "1"]))
        default: // a wire batch of two: the multipart answer and its parts
            let batch = QueryBatch(Query<GenericObject>(api: api, name: "fuzz.get", path: "things/{id}", pathParameters: ["id": "1"]),
                                   Query<GenericObject>(api: api, name: "fuzz.get", path: "things/{id}", pathParameters: ["id": "2"]))
            _ = try? await service.executeBatch(batch)
        }
    }
    return 0
}

@_cdecl("FuzzResponse_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    atexit { removeDownload(at: downloadFile.path) } // libFuzzer ends with exit()
    return runFuzzer(argc, argv) { fuzz($0, $1) }
}
