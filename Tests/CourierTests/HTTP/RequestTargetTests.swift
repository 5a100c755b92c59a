@testable import Courier
import Foundation
import CourierTestSupport
import Testing

/// What the transport reads from a request's URL, once (``RequestTarget``): the fast scan and
/// Foundation's reading must agree on every URL.
@Suite struct RequestTargetTests {
    @Test(arguments: [
        ("http://127.0.0.1:18080/data.json", false, "http://127.0.0.1:18080"),
        ("https://storage.googleapis.com/storage/v1/b?x=1", true, "https://storage.googleapis.com:443"),
        ("http://example.com", false, "http://example.com:80"),
        ("http://example.com?q#f", false, "http://example.com:80"),
        ("https://a-b.example.com:8443#frag", true, "https://a-b.example.com:8443"),
        // Foundation's reading: user info, escapes, brackets, an upper-case scheme.
        ("http://user:s3kr1t@example.com/x", false, "http://example.com:80"),
        ("http://[::1]:8080/x", false, "http://::1:8080"),
        ("HTTPS://Example.com/x", true, "https://Example.com:443"),
        ("http://ex%41mple.com/", false, "http://exAmple.com:80"),
    ])
    func targets(url: String, isHTTPS: Bool, hostKey: String) throws {
        let target = try RequestTarget(URL(string: url)!)
        #expect(target.isHTTPS == isHTTPS)
        #expect(target.hostKey.description == hostKey)
    }

    @Test(arguments: ["ftp://example.com/x", "file:///etc/passwd", "http:///no-host", "mailto:a@b.c", "/relative",
                      "httpx://example.com/"])
    func notSendable(url: String) {
        guard let parsed = URL(string: url) else { return }
        #expect(throws: TransportError.invalidRequest) { try RequestTarget(parsed) }
        #expect(throws: TransportError.self) { try HTTPRequest(url: parsed).validate() }
    }

    /// Keys compare scheme, host and port, whatever else their URLs hold; the port given or
    /// the scheme's default alike.
    @Test func hostKeysCompareSchemeHostAndPort() throws {
        func key(_ url: String) throws -> HostKey { try RequestTarget(URL(string: url)!).hostKey }
        let same = [
            ["http://a.example/x?y=1", "http://a.example:80", "http://a.example:80/other#f", "http://user@a.example/"],
            ["https://a.example", "https://a.example:443/x"],
            ["http://a.example:8080/x", "http://a.example:8080"],
            ["http://[::1]:8080/x", "http://[::1]:8080/y"],
        ]
        for group in same {
            let keys = try group.map(key)
            for other in keys {
                #expect(other == keys[0], "\(group)")
                #expect(other.hashValue == keys[0].hashValue, "\(group)")
            }
        }
        let firsts = try same.map { try key($0[0]) } + [key("http://b.example"), key("http://a.example:81"), key("http://a.exampl")]
        #expect(Set(firsts).count == firsts.count)
        #expect(try key("https://a.example").port == 443 && key("http://a.example:8080/x").port == 8080)
        // A host longer than a key holds (and than DNS allows) is refused, not cut.
        let long = try #require(URL(string: "http://\(String(repeating: "a", count: 70_000)).example/"))
        #expect(throws: TransportError.invalidRequest) { try RequestTarget(long) }
    }

    /// Hostile URLs Foundation parses (issue 51): each is a typed error naming what is wrong, and
    /// the process lives. A port past 65,535 trapped in the host key's narrowing before.
    @Test(arguments: [
        ("http://127.0.0.1:99999/", "port 99999"),
        ("http://127.0.0.1:65536/x", "port 65536"),
        ("http://user@127.0.0.1:99999/", "port 99999"), // Foundation's reading, not the scan's
        ("http://[::1]:123456/", "port 123456"),
        ("http://\(String(repeating: "a", count: 70_000)).example/", "70008 bytes"),
        ("http://\(String(repeating: "a", count: 70_000)):1/", "70000 bytes"),
        ("http://127.0.0.1:8080/a%00b?%00", nil), // an escaped NUL is the server's business
    ] as [(String, String?)])
    func hostileURLsAreTypedErrors(url: String, named: String?) throws {
        guard let parsed = URL(string: url) else {
            Issue.record("Foundation does not parse \(url.prefix(60)): the case tests nothing")
            return
        }
        guard let named else {
            _ = try RequestTarget(parsed)
            return
        }
        do {
            _ = try RequestTarget(parsed)
            Issue.record("\(url.prefix(60)) was accepted")
        } catch {
            #expect(error == .invalidRequest)
            #expect(error.message.contains(named), "\(error.message)")
            #expect(!error.requestMayHaveBeenSent)
            #expect((error.url ?? "").utf8.count < 600, "the error does not carry a megabyte URL")
        }
    }
}

/// A response's headers as they arrived, read on demand (``ReceivedHeaderBlock``).
@Suite struct ReceivedHeadersTests {
    /// Feeds `lines` as curl's header callback delivers them; returns the lines that began a response.
    static func receive(_ lines: [String], into collector: inout ReceivedHeaderCollector) -> [String] {
        lines.filter { line in Array(line.utf8).withUnsafeBytes { collector.receive($0) } }
    }

    static func collected(_ pairs: [(String, String)]) -> HTTPHeaders {
        var collector = ReceivedHeaderCollector()
        _ = receive(["HTTP/1.1 200 OK\r\n"] + pairs.map { "\($0.0): \($0.1)\r\n" } + ["\r\n"], into: &collector)
        return collector.headers
    }

    @Test func lookupsIterationAndEqualityMatchParsedHeaders() {
        let pairs = [("Content-Type", "application/json"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("Empty", "")]
        let received = Self.collected(pairs)
        let parsed = HTTPHeaders(pairs)
        #expect(received == parsed)
        #expect(received.hashValue == parsed.hashValue)
        #expect(received["content-type"] == "application/json")
        #expect(received["CONTENT-TYPE"] == "application/json")
        #expect(received["Missing"] == nil)
        #expect(received["Empty"] == "")
        #expect(received.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(received.contains("set-COOKIE"))
        #expect(!received.contains("Set"))
        #expect(received.count == 4)
        #expect(received.map(\.name) == pairs.map(\.0))
    }

    @Test func changingReceivedHeadersKeepsTheRest() {
        var headers = Self.collected([("A", "1"), ("B", "2"), ("a", "3")])
        let before = headers
        headers["a"] = "x"
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["A=x", "B=2"])
        headers.add(name: "C", value: "4")
        #expect(headers.count == 3)
        #expect(before["a"] == "1" && before.count == 3) // a copy is its own value
    }

    /// Whitespace around values, a value holding colons, a line without one, bare LF endings.
    @Test func linesAreParsedAsRFC9112Says() {
        var collector = ReceivedHeaderCollector()
        _ = Self.receive(["HTTP/1.1 200 OK\r\n", "X-Pad: \t padded value \t\r\n", "Location:http://a:80/b\n", "no colon here\r\n",
                          "Empty:\r\n", "\r\n"], into: &collector)
        let headers = collector.headers
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["X-Pad=padded value", "Location=http://a:80/b", "Empty="])
        #expect(headers.count == 3)
        #expect(headers["location"] == "http://a:80/b")
    }

    @Test func aNewResponseStartsOverAndTrailersAreNotKept() {
        var collector = ReceivedHeaderCollector()
        let began = Self.receive(["HTTP/1.1 100 Continue\r\n", "X-Early: 1\r\n", "\r\n",
                                  "HTTP/1.1 302 Found\r\n", "Location: /elsewhere\r\n", "\r\n",
                                  "HTTP/2 200\r\n", "Content-Type: text/plain\r\n", "\r\n", "X-Trailer: late\r\n"],
                                 into: &collector)
        #expect(began == ["HTTP/1.1 100 Continue\r\n", "HTTP/1.1 302 Found\r\n", "HTTP/2 200\r\n"])
        let ended = collector.headEnded // the collector is noncopyable: #expect takes copies
        let headers = collector.headers
        #expect(ended)
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["Content-Type=text/plain"])
    }

    /// Past the first allocation's room (512 bytes) the block grows and keeps every line whole.
    @Test func manyLongFieldsGrowTheBlockAndAllArrive() {
        let pairs = (0..<40).map { ("X-Field-\($0)", String(repeating: Character(UnicodeScalar(UInt8(97 + $0 % 26))), count: 20 + $0 * 7)) }
        let headers = Self.collected(pairs)
        #expect(headers.map { "\($0.name)=\($0.value)" } == pairs.map { "\($0.0)=\($0.1)" })
        #expect(headers["x-field-39"] == pairs[39].1)
    }

    /// Headers read while lines still arrive are a value: what arrives later (more fields, or a
    /// new response after a redirect) does not change them, and the collector still gets it all.
    @Test func headersReadEarlyAreNotChangedByLaterLines() {
        var collector = ReceivedHeaderCollector()
        _ = Self.receive(["HTTP/1.1 302 Found\r\n", "Location: /elsewhere\r\n"], into: &collector)
        let early = collector.headers
        _ = Self.receive(["X-Later: 1\r\n", "\r\n"], into: &collector)
        let redirect = collector.headers
        _ = Self.receive(["HTTP/1.1 200 OK\r\n", "Content-Type: text/plain\r\n", "\r\n"], into: &collector)
        #expect(early.map { "\($0.name)=\($0.value)" } == ["Location=/elsewhere"])
        #expect(redirect.map { "\($0.name)=\($0.value)" } == ["Location=/elsewhere", "X-Later=1"])
        let final = collector.headers
        #expect(final.map { "\($0.name)=\($0.value)" } == ["Content-Type=text/plain"])
    }

    @Test func foldedLinesJoinTheFieldBefore() {
        var collector = ReceivedHeaderCollector()
        _ = Self.receive(["HTTP/1.1 302 Found\r\n", "Location: /elsewhere\r\n", "\r\n", "HTTP/1.1 200 OK\r\n",
                          "X-Long: first\r\n", "   second\r\n", "\tthird\r\n", "After: folding\r\n", "\r\n"], into: &collector)
        let headers = collector.headers
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["X-Long=first second third", "After=folding"])
        #expect(headers["after"] == "folding")
    }
}

extension RequestTargetTests {
    /// curl takes the URL as a C string: a NUL in it would cut it and send the request elsewhere.
    /// `URL(string:)` escapes one (`%00`, the server's business); a URL made from bytes that still
    /// holds one is a typed error.
    @Test func aURLWithANULByteIsATypedError() throws {
        let parsed = try #require(URL(string: "http://127.0.0.1:8080/a\u{0}b"))
        #expect(!parsed.absoluteString.utf8.contains(0))
        _ = try RequestTarget(parsed)
        let built = URL(dataRepresentation: Data("http://127.0.0.1:8080/a\u{0}b".utf8), relativeTo: nil)
        guard let built, built.absoluteString.utf8.contains(0) else { return } // Foundation refused it too: nothing reaches curl
        #expect(throws: TransportError.invalidRequest) { try RequestTarget(built) }
        #expect(throws: TransportError.invalidRequest) { try HTTPRequest(url: built).validate() }
    }
}
