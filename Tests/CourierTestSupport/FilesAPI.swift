import Courier
import CourierTestServer
import Foundation

package enum Files {
    package static func api(_ server: TestServer) -> APIDescription { api(server.baseURL) }

    /// The test server's Files API at `root` (a server in this process, or `courier serve` elsewhere).
    package static func api(_ root: URL) -> APIDescription {
        APIDescription(name: "files", version: "v1", rootURL: root, servicePath: "files/v1/")
    }

    /// files.insert with media, as a generated client would build it.
    package static func insert(_ server: TestServer, name: String, upload: UploadParameters, faults: [String: String] = [:],
                       metadata: JSONObject? = nil) -> Query<GenericObject> {
        insert(server.baseURL, name: name, upload: upload, faults: faults, metadata: metadata)
    }

    package static func insert(_ root: URL, name: String, upload: UploadParameters, faults: [String: String] = [:],
                       metadata: JSONObject? = nil) -> Query<GenericObject> {
        var query = Query<GenericObject>(api: api(root), name: "files.files.insert", method: .post, path: "files")
        query.uploadPath = "/upload/files/v1/files"
        query.parameters.set("name", name)
        for (key, value) in faults.sorted(by: { $0.key < $1.key }) { query.parameters.set(key, value) }
        if let metadata { query.body = .object(metadata) }
        query.upload = upload
        return query
    }

    package static func media(_ server: TestServer, id: String) -> Query<MediaData> { media(server.baseURL, id: id) }

    package static func media(_ root: URL, id: String) -> Query<MediaData> {
        var query = Query<MediaData>(api: api(root), name: "files.files.get", path: "/download/files/v1/files/{id}",
                                     pathParameters: ["id": id])
        query.downloadsMedia = true
        return query
    }
}

/// A file of pattern bytes in the temporary directory, removed by `remove()`.
package struct PatternFile: Sendable {
    package let url: URL
    package let size: Int

    package init(size: Int, name: String = UUID().uuidString) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(name).bin")
        self.size = size
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var offset = 0
        while offset < size {
            let count = min(4 << 20, size - offset)
            try handle.write(contentsOf: Data(TestPattern.bytes(count: count, offset: offset)))
            offset += count
        }
    }

    package var contents: Data { (try? Data(contentsOf: url)) ?? Data() }

    package func remove() { try? FileManager.default.removeItem(at: url) }
}
