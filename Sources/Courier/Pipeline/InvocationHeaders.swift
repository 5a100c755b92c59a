import Foundation

/// Google Cloud Storage's invocation headers: one ID for all the attempts of one request, and
/// which attempt this is, as Google's own Storage libraries send them (google-cloud-go's
/// `setInvocationHeaders`, the Java, Node, C++ and Rust clients alike):
///
/// ```
/// x-goog-api-client: gccl-invocation-id/<uuid> gccl-attempt-count/<n> gl-swift/<version>
/// x-goog-gcs-idempotency-token: <uuid>
/// ```
///
/// The token lets Cloud Storage tell a retried request from a new one, and the attempt count
/// lets Google's support read a request's retries off the server's logs. Neither changes what
/// Courier retries: that stays the API method's idempotency (Docs/Reliability.md).
///
/// Kept in the pipeline's ``RequestPipeline/AttemptState``, so the ID lasts exactly as long as
/// one request's attempts: a paged list, a resumable upload's chunks and a sliced download's
/// slices each start a new one per request, as google-cloud-go's `run` does per call.
struct InvocationHeaders: Sendable {
    static let apiClient = "x-goog-api-client"
    static let idempotencyToken = "x-goog-gcs-idempotency-token"
    /// The Discovery name of the API whose queries send them by default
    /// (``ServiceActor/Configuration/Queries-swift.struct/invocationHeaderAPIs``).
    static let api = "storage"
    /// The language token Google's libraries end the header with (`gl-go/1.22`).
    static let language = "gl-swift/\(CourierVersion.swiftVersion)"

    /// The invocation's ID: a random UUID, or the caller's own idempotency token.
    let id: String
    /// Attempts stamped so far.
    private(set) var attempts = 0

    /// A fresh invocation for `request`, keeping the token its caller set, if any.
    init(for request: HTTPRequest) {
        if let token = request.headers[Self.idempotencyToken], !token.isEmpty {
            id = token
        } else {
            id = UUID().uuidString.lowercased()
        }
    }

    /// `request` as the next attempt of `invocation` sends it, starting one when there is none.
    static func stamp(_ request: HTTPRequest, continuing invocation: inout InvocationHeaders?) -> HTTPRequest {
        var current = invocation ?? InvocationHeaders(for: request)
        let stamped = current.stamp(request)
        invocation = current
        return stamped
    }

    /// `request` as the next attempt sends it: both headers, and after the invocation tokens any
    /// `x-goog-api-client` value the caller set.
    mutating func stamp(_ request: HTTPRequest) -> HTTPRequest {
        attempts += 1
        var stamped = request
        var client = "gccl-invocation-id/\(id) gccl-attempt-count/\(attempts) \(Self.language)"
        if let own = request.headers[Self.apiClient], !own.isEmpty { client += " \(own)" }
        stamped.headers.replaceOrAdd(name: Self.apiClient, value: client)
        stamped.headers.replaceOrAdd(name: Self.idempotencyToken, value: id)
        return stamped
    }
}
