@testable import Courier
import Foundation
import CourierTestSupport
import Testing

/// The batch response parser as a pure function over bytes.
@Suite struct MultipartParserTests {
    func part(_ id: String, status: String = "200 OK", body: String = #"{"id":"x"}"#, crlf: String = "\r\n") -> String {
        "Content-Type: application/http\(crlf)Content-ID: <response-\(id)>\(crlf)\(crlf)HTTP/1.1 \(status)\(crlf)Content-Type: application/json\(crlf)\(crlf)\(body)"
    }

    @Test func wellFormedCRLFBody() throws {
        let body = "--b\r\n\(part("1"))\r\n--b\r\n\(part("2", status: "404 Not Found"))\r\n--b--\r\n"
        let (parts, complete) = try MultipartParser.parse(Data(body.utf8), boundary: "b")
        #expect(complete)
        #expect(parts.count == 2)
        #expect(parts[1].header("content-id") == "<response-2>")
        let inner = try MultipartParser.httpResponse(parts[1].body)
        #expect(inner.status == 404)
        #expect(String(decoding: inner.body, as: UTF8.self) == #"{"id":"x"}"#)
    }

    @Test func lfOnlyLineEndsPaddingPreambleAndEpilogue() throws {
        let body = "preamble text\n--b  \t\n\(part("1", crlf: "\n"))\n--b\n\(part("2", crlf: "\n"))\n--b--\nepilogue"
        let (parts, complete) = try MultipartParser.parse(Data(body.utf8), boundary: "b")
        #expect(complete)
        #expect(try parts.map { try MultipartParser.httpResponse($0.body).status } == [200, 200])
    }

    @Test func missingAndExtraBlankLines() throws {
        // An extra CRLF before each delimiter and after the part headers.
        let extra = "--b\r\n\(part("1"))\r\n\r\n\r\n--b--"
        let parsedExtra = try MultipartParser.parse(Data(extra.utf8), boundary: "b")
        #expect(parsedExtra.parts.count == 1)
        #expect(try MultipartParser.httpResponse(parsedExtra.parts[0].body).body == Data((#"{"id":"x"}"# + "\r\n\r\n").utf8))
        // No line break at all before the closing delimiter is not a delimiter: the body is truncated.
        let glued = "--b\r\n\(part("1"))--b--"
        #expect(try MultipartParser.parse(Data(glued.utf8), boundary: "b").complete == false)
        // A part with no blank line after its headers.
        let headless = "--b\r\nContent-ID: <x>\r\nHTTP/1.1 200 OK\r\n--b--"
        #expect(throws: MultipartError.self) { try MultipartParser.parse(Data(headless.utf8), boundary: "b") }
    }

    @Test func theBoundaryInsideABodyIsNotADelimiter() throws {
        let tricky = #"{"text":"--b is not a delimiter here","more":"--b--"}"#
        let body = "--b\r\n\(part("1", body: tricky))\r\n--bcontinues on a line\r\n--b--\r\n"
        let (parts, complete) = try MultipartParser.parse(Data(body.utf8), boundary: "b")
        #expect(complete)
        #expect(parts.count == 1)
        #expect(String(decoding: try MultipartParser.httpResponse(parts[0].body).body, as: UTF8.self)
            == tricky + "\r\n--bcontinues on a line")
    }

    @Test func quotedBoundaryParameters() throws {
        #expect(try MultipartParser.boundary(fromContentType: #"multipart/mixed; boundary="a b:c""#) == "a b:c")
        #expect(try MultipartParser.boundary(fromContentType: "multipart/mixed;charset=utf-8; BOUNDARY=xyz") == "xyz")
        #expect(throws: MultipartError.self) { try MultipartParser.boundary(fromContentType: "multipart/mixed") }
        #expect(throws: MultipartError.self) { try MultipartParser.boundary(fromContentType: #"multipart/mixed; boundary="""#) }
    }

    @Test func truncatedBodiesKeepTheCompleteParts() throws {
        let full = "--b\r\n\(part("1"))\r\n--b\r\n\(part("2"))\r\n--b--\r\n"
        for cut in [full.count - 3, full.count - 20, full.count / 2 + 20] {
            let (parts, complete) = try MultipartParser.parse(Data(full.utf8.prefix(cut)), boundary: "b")
            #expect(!complete)
            #expect(parts.count <= 2)
        }
        #expect(throws: MultipartError.self) { try MultipartParser.parse(Data("no delimiter at all".utf8), boundary: "b") }
    }

    @Test func aPartThatIsNotHTTP() throws {
        #expect(throws: MultipartError.self) { try MultipartParser.httpResponse(Data("SSH-2.0 hello".utf8)) }
        #expect(throws: MultipartError.self) { try MultipartParser.httpResponse(Data("HTTP/1.1 abc OK\r\n\r\n".utf8)) }
        #expect(throws: MultipartError.self) { try MultipartParser.httpResponse(Data()) }
        let noContent = try MultipartParser.httpResponse(Data("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        #expect(noContent.status == 204)
        #expect(noContent.body.isEmpty)
    }

    @Test func aDeclaredContentLengthTrimsFramingPadding() throws {
        let inner = try MultipartParser.httpResponse(Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\r\n\r\n".utf8))
        #expect(inner.body == Data("ok".utf8))
    }

    @Test func foldedHeadersAndMissingContentID() throws {
        let body = "--b\r\nContent-Type: application/http\r\nX-Long: one\r\n two\r\n\r\nHTTP/1.1 200 OK\r\n\r\n{}\r\n--b--"
        let (parts, _) = try MultipartParser.parse(Data(body.utf8), boundary: "b")
        #expect(parts[0].header("x-long") == "one two")
        #expect(parts[0].header("Content-ID") == nil)
    }

    /// Every committed fuzzing input parses or fails with a typed error, never a crash.
    @Test func theMalformedCorpusNeverCrashes() throws {
        let corpus = Repository.path("Fuzz/corpus/multipart")
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path)
        #expect(files.count >= 10)
        for file in files {
            let data = try Data(contentsOf: corpus.appendingPathComponent(file))
            if let parsed = try? MultipartParser.parse(data, boundary: "b") {
                for part in parsed.parts { _ = try? MultipartParser.httpResponse(part.body) }
            }
        }
    }

    @Test func theEncoderWritesWhatTheParserReads() throws {
        var request = HTTPRequest(method: .patch, url: URL(string: "https://h/notes/v1/notes/a%2Fb?fields=id&key=k")!)
        request.headers["Content-Type"] = "application/json"
        request.headers["Authorization"] = "Bearer secret"
        request.body = .data(Data(#"{"title":null}"#.utf8))
        let encoded = BatchRequestEncoder.encode([("q1", request), ("q2", HTTPRequest(url: URL(string: "https://h/x")!))],
                                                 boundary: "bb")
        let (parts, complete) = try MultipartParser.parse(encoded, boundary: "bb")
        #expect(complete)
        #expect(parts.count == 2)
        let text = String(decoding: parts[0].body, as: UTF8.self)
        #expect(text.hasPrefix("PATCH /notes/v1/notes/a%2Fb?fields=id&key=k HTTP/1.1\r\n"))
        #expect(text.hasSuffix(#"{"title":null}"#))
        #expect(!text.contains("secret")) // the outer request carries credentials
        #expect(parts[0].header("Content-ID") == "<q1>")
    }
}
