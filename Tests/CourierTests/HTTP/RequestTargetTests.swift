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
        let target = try #require(RequestTarget(URL(string: url)!))
        #expect(target.isHTTPS == isHTTPS)
        #expect(target.hostKey.text == hostKey)
        #expect(target.url == URL(string: url)!.absoluteString)
    }

    @Test(arguments: ["ftp://example.com/x", "file:///etc/passwd", "http:///no-host", "mailto:a@b.c", "/relative",
                      "httpx://example.com/"])
    func notSendable(url: String) {
        guard let parsed = URL(string: url) else { return }
        #expect(RequestTarget(parsed) == nil)
        #expect(throws: TransportError.self) { try HTTPRequest(url: parsed).validate() }
    }

    @Test func hostKeysCompareByText() {
        #expect(HostKey("http://a:80") == HostKey("http://a:80"))
        #expect(HostKey("http://a:80") != HostKey("http://b:80"))
        #expect(Set([HostKey("http://a:80"), HostKey("http://a:80")]).count == 1)
    }
}

/// A response's headers as they arrived, read on demand (``ReceivedHeaderBlock``).
@Suite struct ReceivedHeadersTests {
    static func collected(_ lines: [(String, String)]) -> HTTPHeaders {
        var collector = ReceivedHeaderCollector()
        for (name, value) in lines {
            Array(name.utf8).withUnsafeBytes { n in Array(value.utf8).withUnsafeBytes { v in collector.add(name: n, value: v) } }
        }
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

    @Test func foldedLinesAndANewResponse() {
        var collector = ReceivedHeaderCollector()
        func add(_ name: String, _ value: String) {
            Array(name.utf8).withUnsafeBytes { n in Array(value.utf8).withUnsafeBytes { v in collector.add(name: n, value: v) } }
        }
        add("Location", "/elsewhere")
        collector.reset() // the redirect's target answered
        add("X-Long", "first")
        Array("second".utf8).withUnsafeBytes { collector.continueLastValue($0) }
        add("After", "folding")
        #expect(collector.headers.map { "\($0.name)=\($0.value)" } == ["X-Long=first second", "After=folding"])
    }
}
