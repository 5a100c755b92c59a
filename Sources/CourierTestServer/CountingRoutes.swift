import CourierSync
import Hummingbird

/// Routes that count their requests by key (per server, from 1), for load tests to check exactly
/// what reached the server:
///
/// - `/count/{key}` (any method) answers `{"key":"…","count":N}`: the N-th request to `key`.
///   A run whose every key should arrive once checks `json:$.count==1`.
/// - `GET /sometimes-wrong/{key}?every=N`: a JSON answer that is wrong on every N-th request.
///   Right: `{"ok":true,"items":[1,2,3]}` as `application/json`. Wrong: `{"ok":false,"items":[]}`
///   as `text/plain`. Both are 200: a wrong body is not an error status, which is what checks
///   are for.
enum CountingRoutes {
    struct Count: Codable, ResponseEncodable {
        var key: String
        var count: Int
    }

    static func add(to router: Router<BasicRequestContext>) {
        let counts = LockedValue<[String: Int]>([:])
        for method in HTTPBinRoutes.allMethods {
            router.on("/count/{key}", method: method) { _, context -> Count in
                let key = try context.parameters.require("key")
                return Count(key: key, count: counts.withLock { counts -> Int in
                    counts["count " + key, default: 0] += 1
                    return counts["count " + key]!
                })
            }
        }
        router.get("/sometimes-wrong/{key}") { request, context in
            let key = try context.parameters.require("key")
            let every = max(1, request.uri.queryParameters.get("every", as: Int.self) ?? 10)
            let count = counts.withLock { counts -> Int in
                counts[key, default: 0] += 1
                return counts[key]!
            }
            let wrong = count % every == 0
            var headers = HTTPFields()
            headers[.contentType] = wrong ? "text/plain" : "application/json"
            let body = wrong ? #"{"ok":false,"items":[]}"# : #"{"ok":true,"items":[1,2,3]}"#
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        }
    }
}
