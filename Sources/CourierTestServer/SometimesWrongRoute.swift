import CourierSync
import Hummingbird

/// `GET /sometimes-wrong/{key}?every=N`: a JSON answer that is wrong on every N-th request to
/// `key` (counted per server from 1), for checks to count exactly.
///
/// Right: `{"ok":true,"items":[1,2,3]}` as `application/json`. Wrong: `{"ok":false,"items":[]}` as
/// `text/plain`. Both are 200: a wrong body is not an error status, which is what checks are for.
enum SometimesWrongRoute {
    static func add(to router: Router<BasicRequestContext>) {
        let counts = LockedValue<[String: Int]>([:])
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
