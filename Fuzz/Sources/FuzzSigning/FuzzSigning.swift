import Courier
import Foundation
import FuzzDriver
import GoogleStorage
#if canImport(Glibc)
import Glibc
#endif

// What users hand the signing features, and what any local process can send a browser sign-in's
// loopback listener. The first byte picks the input; the rest is its text (lines):
//   0: a V4 signed URL's options: bucket, object (`-` for none), method, expiration seconds, start
//      date (seconds since 1970), style (`v` virtual-hosted, `b <host>` bucket-bound, else path),
//      scheme, endpoint, universe domain, then `h Name: value` headers and `q name=value` query
//      parameters. It is signed with Google's published test key or refused with SignedURLError;
//      a URL names the bucket and object and carries each query parameter exactly as given.
//   1: a POST policy's options (the same first lines but the method; then `f name=value` fields,
//      `s field=prefix` and `e field=value` conditions, `r low-high` a content-length range):
//      the signed policy is JSON that reads back every field and condition as given.
//   2: a parallel composite upload's four numbers (size, threshold, parts, part size; 8 bytes
//      each): no split, or contiguous non-empty ranges, at most 32, that cover the file.
//   3: the bytes a local process sends the listener of a browser sign-in (`STATE` stands for the
//      sign-in's own state), after which the person declines. The sign-in ends with a typed
//      error (the exchange is refused): never a trap, never a hang.

/// Google's published test key (storage/v1 conformance cases), read from the repository: the fuzzer runs from its root.
private let key: ServiceAccountKey = {
    let file = URL(fileURLWithPath: "Tests/Conformance/googleapis-conformance-tests/test_service_account.not-a-test.json")
    do { return try ServiceAccountKey(contentsOf: file) } catch { fatalError("the fuzz target's key: \(error)") } // the harness's own setup
}()

/// The sign-in's token endpoint, refusing every exchange at once (no network, no retry waits).
private let refusingTokens: ServiceActor = {
    var configuration = ServiceActor.Configuration()
    configuration.testing.handler = { request in
        HTTPResponse(status: 400, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"invalid_grant"}"#.utf8), url: request.url)
    }
    return try! ServiceActor(configuration: configuration) // the harness's own setup, not an input
}()

/// An OAuth client whose consent page is never loaded: the fuzzer plays the browser.
private let client = OAuthClient(clientID: "fuzz-client", clientSecret: nil,
                                 authorizationURL: URL(string: "https://accounts.example/o/oauth2/auth")!, // constants
                                 tokenURL: URL(string: "https://oauth2.example/token")!)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let bytes = Data(UnsafeBufferPointer(start: start + 1, count: count - 1))
    // Split at the byte: a String's "\r\n" is one Character, which a split at "\n" keeps whole.
    let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    switch start[0] % 4 {
    case 0: runToCompletion { await signedURL(lines) }
    case 1: runToCompletion { await postPolicy(lines) }
    case 2: compositeRanges(bytes)
    default: runToCompletion { await signIn(sending: bytes) }
    }
    return 0
}

private func line(_ lines: [String], _ index: Int) -> String { index < lines.count ? lines[index] : "" }

private func style(_ text: String) -> StorageURLStyle {
    if text == "v" { return .virtualHostedStyle }
    if text.hasPrefix("b ") { return .bucketBoundHostname(String(text.dropFirst(2))) }
    return .pathStyle
}

/// `text`'s bytes with every `%XX` decoded, as a server reads a URL's path and query.
private func percentDecoded(_ text: Substring) -> String {
    var bytes: [UInt8] = []
    var index = text.utf8.startIndex
    let utf8 = text.utf8
    while index < utf8.endIndex {
        let byte = utf8[index]
        if byte == UInt8(ascii: "%"), let high = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex), high < utf8.endIndex,
           let low = utf8.index(high, offsetBy: 1, limitedBy: utf8.endIndex), low < utf8.endIndex,
           let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16) {
            bytes.append(value)
            index = utf8.index(after: low)
        } else {
            bytes.append(byte)
            index = utf8.index(after: index)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

private func signedURL(_ lines: [String]) async {
    var options = SignedURLOptions(method: line(lines, 2), expiration: .seconds(Int64(line(lines, 3)) ?? 3600), style: style(line(lines, 5)))
    if let seconds = Double(line(lines, 4)) { options.date = Date(timeIntervalSince1970: seconds) }
    options.scheme = line(lines, 6).isEmpty ? nil : line(lines, 6)
    options.endpoint = line(lines, 7).isEmpty ? nil : line(lines, 7)
    if !line(lines, 8).isEmpty { options.universeDomain = line(lines, 8) }
    for extra in lines.dropFirst(9) {
        if extra.hasPrefix("h "), let colon = extra.firstIndex(of: ":") {
            options.headers[String(extra[extra.index(extra.startIndex, offsetBy: 2)..<colon])] = String(extra[extra.index(after: colon)...])
        } else if extra.hasPrefix("q "), let equals = extra.firstIndex(of: "=") {
            options.queryParameters[String(extra[extra.index(extra.startIndex, offsetBy: 2)..<equals])] = String(extra[extra.index(after: equals)...])
        }
    }
    let bucket = line(lines, 0)
    let object: String? = line(lines, 1) == "-" ? nil : line(lines, 1)
    let url: URL
    do {
        url = try await StorageSigning.signedURL(bucket: bucket, object: object, options: options, signer: key)
    } catch is SignedURLError {
        return
    } catch {
        preconditionFailure("not a SignedURLError: \(error)")
    }
    // What a server reads from the URL is what was signed for: the path names the bucket (unless
    // a host does) and the object, and each query parameter arrives with its value.
    let text = url.absoluteString
    guard let schemeEnd = text.range(of: "://"), let pathStart = text[schemeEnd.upperBound...].firstIndex(of: "/"),
          let queryStart = text[pathStart...].firstIndex(of: "?") else {
        preconditionFailure("a signed URL without a path and query: \(text)")
    }
    var expectedPath = ""
    if case .pathStyle = options.style { expectedPath = "/" + bucket }
    if let object { expectedPath += "/" + object }
    if expectedPath.isEmpty { expectedPath = "/" }
    let path = percentDecoded(text[pathStart..<queryStart])
    precondition(path == expectedPath, "the URL's path \(path.debugDescription) is not \(expectedPath.debugDescription)")
    var query: [String: [String]] = [:]
    for pair in text[text.index(after: queryStart)...].split(separator: "&", omittingEmptySubsequences: false) {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        query[percentDecoded(parts[0]), default: []].append(parts.count > 1 ? percentDecoded(parts[1]) : "")
    }
    for (name, value) in options.queryParameters where !name.hasPrefix("X-Goog-") {
        precondition(query[name] == [value], "the query parameter \(name.debugDescription) reads \(query[name] ?? []), not \(value.debugDescription)")
    }
    let signed = Set(options.headers.keys.map { $0.lowercased() }).union(["host"]).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    precondition(query["X-Goog-SignedHeaders"] == [signed.joined(separator: ";")], "signed headers \(query["X-Goog-SignedHeaders"] ?? [])")
    precondition(query["X-Goog-Signature"]?.first?.count == 512, "an RSA-2048 signature is 512 hex digits")
    // Only headers HTTP can carry were signed.
    for (name, value) in options.headers {
        precondition(name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") },
                     "a header name no header line can carry was signed: \(name.debugDescription)")
        precondition(value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }, "a control character was signed: \(value.debugDescription)")
    }
}

private func postPolicy(_ lines: [String]) async {
    var options = PostPolicyOptions(expiration: .seconds(Int64(line(lines, 3)) ?? 3600), style: style(line(lines, 5)))
    if let seconds = Double(line(lines, 4)) { options.date = Date(timeIntervalSince1970: seconds) }
    options.scheme = line(lines, 6).isEmpty ? nil : line(lines, 6)
    options.endpoint = line(lines, 7).isEmpty ? nil : line(lines, 7)
    if !line(lines, 8).isEmpty { options.universeDomain = line(lines, 8) }
    for extra in lines.dropFirst(9) {
        let kind = extra.prefix(2)
        let rest = extra.dropFirst(2)
        let equals = rest.firstIndex(of: "=")
        let name = equals.map { String(rest[..<$0]) } ?? String(rest)
        let value = equals.map { String(rest[rest.index(after: $0)...]) } ?? ""
        switch kind {
        case "f ": options.fields[name] = value
        case "s ": options.conditions.append(.startsWith(field: name, prefix: value))
        case "e ": options.conditions.append(.matches(field: name, value: value))
        case "r ":
            let bounds = rest.split(separator: "-", maxSplits: 1).compactMap { Int64($0) }
            if bounds.count == 2, bounds[0] <= bounds[1] { options.conditions.append(.contentLengthRange(bounds[0]...bounds[1])) }
        default: break
        }
    }
    let bucket = line(lines, 0)
    let object = line(lines, 1)
    let policy: SignedPostPolicy
    do {
        policy = try await StorageSigning.postPolicy(bucket: bucket, object: object, options: options, signer: key)
    } catch is SignedURLError {
        return
    } catch {
        preconditionFailure("not a SignedURLError: \(error)")
    }
    // The policy is JSON whose conditions read back as given: the escaping loses and adds nothing.
    guard let encoded = policy.fields["policy"], let document = Data(base64Encoded: encoded),
          let conditions = (try? JSONValue(parsing: document))?["conditions"]?.arrayValue else {
        preconditionFailure("the policy is not base64 JSON with conditions: \(policy.fields["policy"] ?? "none")")
    }
    var expected: [JSONValue] = options.conditions.map { condition in
        switch condition {
        case .contentLengthRange(let range):
            .array([.string("content-length-range"), .number(JSONNumber(range.lowerBound)), .number(JSONNumber(range.upperBound))])
        case .startsWith(let field, let prefix): .array([.string("starts-with"), .string(field), .string(prefix)])
        case .matches(let field, let value): .array([.string("eq"), .string(field), .string(value)])
        }
    }
    expected += options.fields.map { JSONValue.object(JSONObject([($0.key, .string($0.value))])) }
    expected += [("bucket", bucket), ("key", object)].map { JSONValue.object(JSONObject([($0.0, .string($0.1))])) }
    for condition in expected {
        precondition(conditions.contains(condition), "the policy lacks \(condition): \(String(decoding: document, as: UTF8.self))")
    }
    precondition(policy.fields["key"] == object)
}

private func compositeRanges(_ bytes: Data) {
    let numbers = (0..<4).map { index -> Int64 in
        let slice = bytes.dropFirst(index * 8).prefix(8)
        return slice.reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }
    let composite = ParallelCompositeUpload(threshold: numbers[1], maximumParts: Int(truncatingIfNeeded: numbers[2]), minimumPartSize: numbers[3])
    guard let ranges = composite.ranges(size: numbers[0]) else { return }
    precondition((2...32).contains(ranges.count), "\(ranges.count) parts")
    precondition(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == numbers[0], "the parts do not cover the file")
    precondition(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound } && ranges.allSatisfy { !$0.isEmpty })
}

private func signIn(sending payload: Data) async {
    let signIn = UserSignIn(client: client, scopes: ["scope"], through: refusingTokens)
    do {
        _ = try await signIn.withBrowser(timeout: .seconds(30)) { consent in
            let items = URLComponents(url: consent, resolvingAgainstBaseURL: false)?.queryItems ?? []
            guard let redirect = items.first(where: { $0.name == "redirect_uri" })?.value.flatMap(URL.init(string:)),
                  let port = redirect.port, let state = items.first(where: { $0.name == "state" })?.value else {
                preconditionFailure("a consent URL without its redirect and state: \(consent)")
            }
            let bytes = String(bytes: payload, encoding: .utf8).map { Array($0.replacingOccurrences(of: "STATE", with: state).utf8) } ?? Array(payload)
            let decline = Array("GET /?state=\(state)&error=access_denied HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            // On a thread: the listener serves only once this closure returns.
            Thread.detachNewThread {
                exchange(port: port, bytes)
                exchange(port: port, decline)
            }
        }
        preconditionFailure("a sign-in succeeded though its exchange is refused")
    } catch let error as any CourierError {
        _ = error.description
    } catch {
        preconditionFailure("not a typed error: \(error)")
    }
}

/// Connects to the listener, sends `bytes`, ends its side and reads until the listener closes.
private func exchange(port: Int, _ bytes: [UInt8]) {
    let connection = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard connection >= 0 else { return }
    defer { close(connection) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(clamping: port)).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected else { return }
    var offset = 0
    while offset < bytes.count {
        let sent = bytes.withUnsafeBytes { send(connection, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
        if sent <= 0 { break }
        offset += sent
    }
    shutdown(connection, Int32(SHUT_WR))
    var buffer = [UInt8](repeating: 0, count: 4096)
    while recv(connection, &buffer, buffer.count, 0) > 0 {}
}

@_cdecl("FuzzSigning_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzz($0, $1) }
}
