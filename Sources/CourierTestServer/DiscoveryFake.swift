import CourierSync
import Foundation
import HTTPTypes
import Hummingbird

/// A fake of Google's Discovery service: `GET /discovery/v1/apis/<name>/<version>/rest` answers
/// the document published under that name, and 404 with Google's error body for any other, so
/// `courier generate drive:v3 --discovery-root <server>` runs without the internet.
public final class DiscoveryFake: Sendable {
    private let documents = LockedValue<[String: Data]>([:])
    private let requests = LockedValue(0)

    init() {}

    /// Serves `document` as `name:version` from now on (replacing an earlier one: a new revision).
    public func publish(_ document: Data, name: String, version: String) {
        documents.withLock { $0["\(name):\(version)"] = document }
    }

    /// Publishes every Discovery document (JSON whose `kind` is `discovery#restDescription`) in
    /// `folder` under its own `name` and `version`; returns them, sorted.
    @discardableResult
    public func publishFolder(_ folder: URL) throws -> [(name: String, version: String)] {
        var published: [(name: String, version: String)] = []
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        where file.pathExtension == "json" {
            guard let data = FileManager.default.contents(atPath: file.path),
                  let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  json["kind"] as? String == "discovery#restDescription",
                  let name = json["name"] as? String, let version = json["version"] as? String else { continue }
            publish(data, name: name, version: version)
            published.append((name, version))
        }
        return published.sorted { ($0.name, $0.version) < ($1.name, $1.version) }
    }

    /// Documents asked for, found or not.
    public var requestCount: Int { requests.withLock { $0 } }

    func add(to router: Router<BasicRequestContext>) {
        router.get("/discovery/v1/apis/:name/:version/rest") { _, context in
            self.requests.withLock { $0 += 1 }
            let name = try context.parameters.require("name")
            let version = try context.parameters.require("version")
            guard let document = self.documents.withLock({ $0["\(name):\(version)"] }) else {
                let body = #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}"#
                return Response(status: .notFound, headers: [.contentType: "application/json; charset=UTF-8"],
                                body: .init(byteBuffer: ByteBuffer(string: body)))
            }
            return Response(status: .ok, headers: [.contentType: "application/json; charset=UTF-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
    }
}
