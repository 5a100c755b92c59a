@testable import Courier
import Foundation
import Testing

/// ``HTTPRequest`` keeps its fields in one shared reference (copy on write): copies must still
/// behave as independent values.
@Suite struct HTTPRequestTests {
    @Test func aChangedCopyLeavesTheOriginalAlone() {
        var original = HTTPRequest(method: .post, url: URL(string: "http://127.0.0.1:1/a")!, headers: ["A": "1"],
                                   body: .data(Data("one".utf8)), timeouts: Timeouts(total: .seconds(5)))
        original.idempotency = .always
        let snapshot = original
        var copy = original
        copy.method = .put
        copy.url = URL(string: "http://127.0.0.1:1/b")!
        copy.headers["A"] = "2"
        copy.headers.add(name: "B", value: "3")
        copy.body = .data(Data("two".utf8))
        copy.timeouts.total = .seconds(9)
        copy.idempotency = .never
        copy.progress = { _ in }

        #expect(original.method == .post && original.url.path == "/a" && original.headers["A"] == "1")
        #expect(!original.headers.contains("B") && original.timeouts.total == .seconds(5))
        #expect(original.idempotency == .always && original.progress == nil)
        #expect(original.body.knownLength == 3 && copy.body.knownLength == 3)
        copy.body = .empty
        #expect(original.body.knownLength == 3 && copy.body.knownLength == 0)
        #expect(snapshot.headers["A"] == "1")

        #expect(copy.method == .put && copy.url.path == "/b" && copy.headers["A"] == "2" && copy.headers["B"] == "3")
        #expect(copy.timeouts.total == .seconds(9) && copy.idempotency == .never && copy.progress != nil)

        original.headers["C"] = "4" // the original, shared with `snapshot`, copies before it changes too
        #expect(original.headers["C"] == "4" && !snapshot.headers.contains("C") && !copy.headers.contains("C"))
    }

    @Test func aRequestThatIsNotSharedChangesInPlace() {
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1:1/")!)
        request.headers["X"] = "1"
        let before = request.storageIdentity
        for index in 0..<100 { request.headers["X-\(index)"] = "\(index)" }
        request.method = .delete
        #expect(request.storageIdentity == before) // no copy: nothing else held the fields
        let copy = request
        request.method = .get
        #expect(request.storageIdentity != copy.storageIdentity && copy.method == .delete)
    }
}
