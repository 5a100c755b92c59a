import Courier
import Foundation
import FuzzDriver

// What users hand the SDK (issue 51): line 1 a URL, line 2 a method, then `Name: value` header
// lines, an empty line and the body. The request is validated, then sent through the whole
// pipeline twice: to a test handler (its URL as given), and over loopback to a closed port (its
// path, query, method, headers and body as given; the host is always 127.0.0.1, so a fuzzed
// host is never looked up). Every step must return or throw a typed error: nothing may trap.

/// The services, made once: each input sends through them.
private let handled: ServiceActor = {
    var configuration = ServiceActor.Configuration()
    configuration.testing.handler = { request in
        HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: Data(request.method.rawValue.utf8), url: request.url)
    }
    return try! ServiceActor(configuration: configuration)
}()

private let loopback: ServiceActor = {
    var configuration = ServiceActor.Configuration()
    configuration.transport.timeouts.total = .seconds(2)
    return try! ServiceActor(configuration: configuration)
}()


@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: start, count: count))
    let head: Data
    let body: Data
    if let split = bytes.range(of: Data("\n\n".utf8)) {
        head = bytes[..<split.lowerBound]
        body = bytes[split.upperBound...]
    } else {
        head = bytes
        body = Data()
    }
    let lines = String(decoding: head, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let first = lines.first, let url = URL(string: first) else { return 0 }
    var request = HTTPRequest(method: HTTPMethod(rawValue: lines.count > 1 ? lines[1] : "GET"), url: url)
    for line in lines.dropFirst(2) {
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        request.headers.add(name: String(parts[0]), value: parts.count > 1 ? String(parts[1].drop { $0 == " " }) : "")
    }
    if !body.isEmpty { request.body = .data(body) }
    _ = try? request.validate()
    _ = request.isIdempotent
    let asGiven = request
    var local = request
    var components = URLComponents(url: url, resolvingAgainstBaseURL: false) ?? URLComponents()
    components.scheme = "http"
    components.host = "127.0.0.1"
    components.port = 9 // discard: nothing listens, the connect is refused at once
    components.user = nil
    components.password = nil
    if let loopbackURL = components.url { local.url = loopbackURL }
    let sendable = local
    runToCompletion {
        _ = try? await handled.send(asGiven)
        if sendable.url.host == "127.0.0.1" { _ = try? await loopback.send(sendable) }
    }
    return 0
}

@_cdecl("FuzzRequest_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
