import CourierSync
import Foundation
import Hummingbird
import NIOCore
import Synchronization

/// `/json/{size}`: a JSON document of exactly `size` bytes (at least 64), the same every time —
/// what `courier load` targets by default and what the nginx benchmark serves.
enum SampleJSON {
    private static let cache = LockedValue<[Int: ByteBuffer]>([:])

    static func add(to router: Router<BasicRequestContext>) {
        router.get("/json/{size}") { _, context in
            let size = try context.parameters.require("size", as: Int.self)
            guard (64...(16 << 20)).contains(size) else { throw HTTPError(.badRequest, message: "size must be 64 bytes to 16 MiB") }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: buffer(size: size)))
        }
    }

    private static func buffer(size: Int) -> ByteBuffer {
        if let cached = cache.withLock({ $0[size] }) { return cached }
        let buffer = ByteBuffer(bytes: document(size: size))
        cache.withLock { if $0.count < 64 { $0[size] = buffer } }
        return buffer
    }

    /// A notes-like collection padded to `size` bytes.
    static func document(size: Int) -> [UInt8] {
        var items: [String] = []
        func render(_ padding: Int) -> String {
            #"{"kind":"courier#sample","items":["# + items.joined(separator: ",") + #"],"padding":""#
                + String(repeating: "x", count: padding) + #""}"#
        }
        while true {
            let next = #"{"id":"\#(items.count + 1)","title":"Note \#(items.count + 1)","done":false}"#
            items.append(next)
            if render(0).utf8.count > size {
                items.removeLast()
                break
            }
        }
        return Array(render(max(0, size - render(0).utf8.count)).utf8)
    }
}
