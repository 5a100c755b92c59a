import Foundation

/// How an API's owner classes one of its methods for retry: whether a request that may have
/// reached the server can be sent again.
///
/// HTTP's rule (RFC 9110: PUT and DELETE are idempotent, POST is not) is not the API's. Cloud
/// Storage's `objects.delete` is a DELETE that must not be repeated without `ifGenerationMatch`
/// (a repeat can delete a generation written in between), and its `buckets.insert` is a POST
/// that is always safe to repeat (a bucket name is created once). Google publishes the classes
/// of its methods (cloud.google.com/storage/docs/retry-strategy), and its client libraries run
/// a shared set of conformance cases against them.
///
/// Generated clients set ``Query/methodIdempotency`` from the API's table, which the generator
/// reads as data (`Sources/CourierGenerator/Idempotency/`); an API without a table keeps HTTP's
/// rule. A query's own ``ExecutionParameters/idempotency`` other than `.automatic` overrides it,
/// and a query that carries its ``Query/deduplicationParameter`` is safe to repeat whatever its
/// class: the server ignores a repeat.
public enum MethodIdempotency: Sendable, Hashable {
    /// Always safe to repeat.
    case idempotent
    /// Safe to repeat only with one of these preconditions: URL parameters (`ifGenerationMatch`)
    /// or fields of the JSON body (`etag`, as `setIamPolicy` carries it).
    case conditional(parameters: [String] = [], bodyFields: [String] = [])
    /// Never safe to repeat once it may have arrived.
    case nonIdempotent
}

extension Query {
    /// The idempotency of the requests that carry this query: the query's declared one, else safe
    /// to repeat when it carries its deduplication parameter, else its method's class, else
    /// HTTP's rule (``Idempotency/automatic``).
    var requestIdempotency: Idempotency {
        guard execution.idempotency == .automatic else { return execution.idempotency }
        if let name = deduplicationParameter, parameters[name]?.isEmpty == false { return .always }
        guard let methodIdempotency else { return .automatic }
        switch methodIdempotency {
        case .idempotent:
            return .always
        case .nonIdempotent:
            return .never
        case .conditional(let names, let fields):
            if names.contains(where: { parameters[$0] != nil }) { return .always }
            if case .object(let object)? = body, fields.contains(where: { object[$0].map { $0 != .null } ?? false }) {
                return .always
            }
            return .never
        }
    }
}
